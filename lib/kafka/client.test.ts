import { describe, expect, it } from 'vitest';
import { expectedStartState, startStateFilter } from './client.ts';

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

describe("a consumer's crash while its coordinator loads, and its restart", () => {
  const crash = { message: "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests", groupId: 'normalizer' };
  const restart = { message: 'Restarting the consumer in 300ms', groupId: 'normalizer' };

  it('are expected on a new broker: both said at info', () => {
    const filter = startStateFilter();
    expect(filter(crash)).toMatch(/^consumer waiting for its group coordinator .*expected on a new broker/);
    expect(filter(restart)).toMatch(/^restarting the consumer in 300ms \(after the expected crash above\)$/);
    expect(expectedStartState({ message: 'Response JoinGroup(key: 11, version: 5)', error: "The coordinator is loading and hence can't process requests" }))
      .toMatch(/expected/);
  });

  it('also when kafkajs retried first and the retries ran out (a slow election on a loaded machine)', () => {
    const filter = startStateFilter();
    expect(filter({ message: 'Crash: KafkaJSNumberOfRetriesExceeded: This is not the correct coordinator for this group', groupId: 'normalizer' }))
      .toMatch(/^consumer waiting for its group coordinator \(This is not the correct coordinator for this group\)/);
    expect(filter(restart)).toMatch(/after the expected crash above/);
    expect(filter({ message: 'Crash: KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED', groupId: 'normalizer' })).toBeNull();
    expect(filter(restart)).toBeNull();
  });

  it('any other crash, and a restart after it or after none, stay errors', () => {
    const filter = startStateFilter();
    expect(filter(restart)).toBeNull();
    expect(filter({ message: 'Crash: KafkaJSProtocolError: Not authorized to access group', groupId: 'normalizer' })).toBeNull();
    expect(filter(restart)).toBeNull();
    // An expected crash of one group does not excuse another group's restart.
    expect(filter(crash)).not.toBeNull();
    expect(filter({ ...restart, groupId: 'dispatcher' })).toBeNull();
    expect(filter(restart)).not.toBeNull();
    expect(filter(restart)).toBeNull();
  });
});
