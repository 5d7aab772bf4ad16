import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, base, loadSession, type Session, setBasePath, signInAgain } from './api.js';
import { AccountPage } from './account-page.js';
import { ApplicationsPage } from './applications-page.js';
import { ContainersPage } from './containers-page.js';
import { TokensPage } from './tokens-page.js';
import { UsersPage } from './users-page.js';
import { VolumesPage } from './volumes-page.js';
import { html, Link } from './ui.js';

type Route =
  | { page: 'containers' }
  | { page: 'container'; id: string }
  | { page: 'volumes' }
  | { page: 'tokens' }
  | { page: 'applications' }
  | { page: 'users' }
  | { page: 'account' }
  | { page: 'unknown' };

/** Which page a URL under /console names; reloading a URL draws the same page. */
function routeOf(pathname: string): Route {
  const path = pathname.slice(`${base()}/console`.length).replace(/\/+$/, '');
  if (path === '' || path === '/containers') return { page: 'containers' };
  const container = /^\/containers\/([\w-]+)$/.exec(path);
  if (container) return { page: 'container', id: container[1]! };
  if (path === '/volumes') return { page: 'volumes' };
  if (path === '/tokens') return { page: 'tokens' };
  if (path === '/applications') return { page: 'applications' };
  if (path === '/users') return { page: 'users' };
  if (path === '/account') return { page: 'account' };
  return { page: 'unknown' };
}

const TITLES: Record<Route['page'], string> = {
  containers: 'Containers',
  container: 'Container',
  volumes: 'Volumes',
  tokens: 'Tokens',
  applications: 'Applications',
  users: 'Users',
  account: 'Account',
  unknown: 'Not found',
};

/** The container page and uPlot load only when a container is opened (the first page stays small). */
function LazyContainerPage(props: { id: string }) {
  const [page, setPage] = useState<null | ((props: { id: string }) => unknown)>(null);
  useEffect(() => {
    void import('./container-page.js').then((module) => setPage(() => module.ContainerPage));
  }, []);
  return page ? html`<${page} id=${props.id} />` : html`<p>Loading…</p>`;
}

function App(props: { session: Session }) {
  const [route, setRoute] = useState(routeOf(location.pathname));
  useEffect(() => {
    const onPop = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  useEffect(() => {
    document.title = `${TITLES[route.page]} · Console`;
    // Moves focus to the new page, as a page load would, for keyboard and screen reader users.
    document.getElementById('content')?.focus();
  }, [route]);

  const signOut = async () => {
    await api('DELETE', '/api/v1/sessions/current').catch(() => undefined);
    location.assign(`${base()}/login`);
  };
  const here = (page: Route['page']) => (route.page === page || (page === 'containers' && route.page === 'container') ? 'page' : undefined);
  const nav = (href: string, page: Route['page'], label: string) =>
    html`<li><a href=${`${base()}${href}`} aria-current=${here(page)} onClick=${(event: MouseEvent) => {
      event.preventDefault();
      history.pushState(null, '', `${base()}${href}`);
      setRoute(routeOf(location.pathname));
    }}>${label}</a></li>`;

  const isAdmin = props.session.user.role === 'admin';
  let content: unknown;
  if (route.page === 'containers') content = html`<${ContainersPage} admin=${isAdmin} />`;
  else if (route.page === 'container') content = html`<${LazyContainerPage} key=${route.id} id=${route.id} />`;
  else if (route.page === 'volumes') content = html`<${VolumesPage} />`;
  else if (route.page === 'tokens') content = html`<${TokensPage} />`;
  else if (route.page === 'applications') content = html`<${ApplicationsPage} />`;
  else if (route.page === 'users' && isAdmin) content = html`<${UsersPage} selfId=${props.session.user.id} />`;
  else if (route.page === 'account') content = html`<${AccountPage} email=${props.session.user.email} />`;
  else content = html`<h1>Not found</h1><p><${Link} href=${`${base()}/console/containers`}>Go to your containers<//></p>`;

  return html`<a class="skip" href="#content">Skip to content</a>
    <header>
      <nav aria-label="Console">
        <ul>
          ${nav('/console/containers', 'containers', 'Containers')}
          ${nav('/console/volumes', 'volumes', 'Volumes')}
          ${nav('/console/tokens', 'tokens', 'Tokens')}
          ${nav('/console/applications', 'applications', 'Applications')}
          <li><a href=${`${base()}/settings/authorizations`}>Authorized applications</a></li>
          ${isAdmin ? nav('/console/users', 'users', 'Users') : null}
          ${nav('/console/account', 'account', 'Account')}
        </ul>
      </nav>
      <div class="who"><span class="muted">${props.session.user.email}</span> <button type="button" class="secondary" onClick=${signOut}>Sign out</button></div>
    </header>
    <main id="content" tabindex="-1">${content}</main>`;
}

async function start(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) return;
  setBasePath(root.dataset.base ?? '');
  try {
    const session = await loadSession();
    root.textContent = '';
    render(html`<${App} session=${session} />`, root);
  } catch {
    signInAgain();
  }
}

void start();
