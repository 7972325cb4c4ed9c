export { DEFAULT_NAMESPACE, backendOptionsOf, openBackend, type Backend, type BackendLog, type BackendOptions, type CacheOptions } from './backend.ts';
export type { EmbeddedPipeline, Lanes, NormalizedListener, PipelineSettings, Predictions } from './pipeline.ts';
