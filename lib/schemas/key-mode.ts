/**
 * A key's mode (contracts.md): `trk_test_` keys see the sandbox carrier network, `trk_live_` keys
 * the real carriers. Everything kept apart by it (polls, cached records, lanes, watches, webhook
 * endpoints) uses this one type.
 */
export type KeyMode = 'test' | 'live';
