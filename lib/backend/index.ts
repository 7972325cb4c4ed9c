export { openBackend, type Backend, type BackendOptions } from './backend.ts';
