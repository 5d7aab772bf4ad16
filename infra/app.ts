import { buildApp } from './build-app.js';

buildApp().app.synth();
