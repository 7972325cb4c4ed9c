import { describe, expect, it } from 'vitest';
import { expectedStartState } from './client.ts';

describe('expectedStartState: kafkajs lines of a healthy first start, said as expected', () => {
  it('a coordinator not elected yet (group or producer id) is expected', () => {
    expect(expectedStartState({ message: 'Response GroupCoordinator(key: 10, version: 2)', error: 'The group coordinator is not available' }))
      .toMatch(/^waiting for a consumer group coordinator \(The group coordinator is not available\): expected on a new broker/);
    expect(expectedStartState({ message: 'Response InitProducerId(key: 22, version: 1)', error: "The coordinator is loading and hence can't process requests for this group" }))
      .toMatch(/^waiting for a producer id .*expected/);
    expect(expectedStartState({ message: 'Limiting retries for the idempotent producer may invalidate EoS guarantees' })).toMatch(/bounded retries/);
  });

  it('anything else, the same requests failing otherwise included, is not', () => {
    expect(expectedStartState({ message: 'Response InitProducerId(key: 22, version: 1)', error: 'Not authorized to access topics' })).toBeNull();
    expect(expectedStartState({ message: 'Response Produce(key: 0, version: 7)', error: 'The group coordinator is not available' })).toBeNull();
    expect(expectedStartState({ message: 'Connection error: connect ECONNREFUSED' })).toBeNull();
  });
});
