export { openStore, type OpenStoreOptions } from './open-store.js';
export { latestSchemaVersion } from './migrations.js';
export { KEEP_PLANS } from './plans-state.js';
export * from './types.js';
