/** A setting that is unknown or has a bad value: synth stops with its message as one line (infra/app.ts). */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}
