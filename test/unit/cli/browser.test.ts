import type { SpawnOptions } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { browserCommandFor, openBrowser } from '../../../cli/src/browser.js';

/** A spawn that records what it was asked to run and runs nothing. */
function recorder() {
  const calls: Array<{ command: string; args: string[]; options: SpawnOptions }> = [];
  const run = (command: string, args: string[], options: SpawnOptions) => {
    calls.push({ command, args, options });
    return { on: () => undefined, unref: () => undefined };
  };
  return { calls, run };
}

const DESKTOP = { DISPLAY: ':0' };

describe('openBrowser', () => {
  it.each([
    ['win32', 'rundll32', ['url.dll,FileProtocolHandler']],
    ['darwin', 'open', []],
    ['linux', 'xdg-open', []],
  ] as const)('on %s runs %s with the URL as one argument, and no shell', (platform, program, before) => {
    // Prepare: a URL a server chose, with what a shell would read as command separators.
    const { calls, run } = recorder();
    const url = 'https://console.example.com/device?user_code=ABCD-EFGH&x=1|calc"';

    // Act
    const opened = openBrowser(url, { platform, env: DESKTOP, run });

    // Assess
    expect(opened).toBe(true);
    expect(calls).toHaveLength(1);
    const [{ command, args, options }] = calls as [(typeof calls)[number]];
    expect(command).toBe(program);
    expect(args).toEqual([...before, new URL(url).href]);
    expect(options.shell).toBe(false);
    expect([command, ...args]).not.toContain('cmd');
    expect(args).not.toContain('/c');
  });

  it('opens only http and https URLs', () => {
    const { calls, run } = recorder();

    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'ms-settings:', 'not a url']) {
      expect(openBrowser(url, { platform: 'win32', env: DESKTOP, run })).toBe(false);
    }

    expect(calls).toEqual([]);
  });

  it("opens a device page only on the API's own origin", () => {
    const { calls, run } = recorder();

    const elsewhere = openBrowser('https://evil.example/device?user_code=X', {
      origin: 'https://api.example.com',
      platform: 'linux',
      env: DESKTOP,
      run,
    });
    const own = openBrowser('https://api.example.com/device?user_code=X', {
      origin: 'https://api.example.com',
      platform: 'linux',
      env: DESKTOP,
      run,
    });

    expect([elsewhere, own]).toEqual([false, true]);
    expect(calls.map((call) => call.args[0])).toEqual(['https://api.example.com/device?user_code=X']);
  });

  it('runs nothing where there is no desktop', () => {
    const { calls, run } = recorder();

    expect(openBrowser('https://api.example.com/', { platform: 'linux', env: {}, run })).toBe(false);
    expect(calls).toEqual([]);
  });
});

describe('browserCommandFor', () => {
  it('never names cmd.exe on Windows', () => {
    expect(browserCommandFor('win32', 'https://a.example/')).toEqual(['rundll32', ['url.dll,FileProtocolHandler', 'https://a.example/']]);
  });
});
