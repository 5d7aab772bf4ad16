import { buildApp } from './build-app.js';
import { SettingsError } from './settings-error.js';

try {
  buildApp().app.synth();
} catch (error) {
  // A setting the operator got wrong is one line to act on, not a stack trace.
  if (!(error instanceof SettingsError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 1;
}
