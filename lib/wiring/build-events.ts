import { buildEventFromMessage } from '../aws/build-event-messages.js';
import type { DeployService } from '../deploys/deploy-service.js';

/** What one build events message did: the deploy's outcome, or why it was passed over. */
export type BuildEventOutcome = 'not a build event' | 'upload seen' | Awaited<ReturnType<DeployService['applyBuildStatus']>>;

/**
 * One message of the build events queue, applied: an uploaded context starts its deploy's build
 * (DeployService.uploadCompleted), a build status moves its deploy on (applyBuildStatus), a
 * deadline asks the builder about a build whose events may be lost (checkBuild). All
 * are idempotent, so a message delivered twice changes nothing the second time.
 */
export function buildEventsHandlerWith(deploys: Pick<DeployService, 'uploadCompleted' | 'applyBuildStatus' | 'checkBuild'>) {
  return async (body: string): Promise<BuildEventOutcome> => {
    const message = buildEventFromMessage(body);
    if (!message) return 'not a build event';
    if (message.kind === 'uploaded') {
      await deploys.uploadCompleted(message.ref);
      return 'upload seen';
    }
    if (message.kind === 'deadline') return deploys.checkBuild(message.ref);
    return deploys.applyBuildStatus(message.status);
  };
}
