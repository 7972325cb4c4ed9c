/** Ekart's real bodies (fixtures/SOURCES.md): each gives the outcome it means. */
import { describe, expect, it } from 'vitest';
import { fixtureResponse, pollAnswer } from '../testing/fixtures.ts';
import { adapter } from './adapter.ts';

describe('ekart real bodies (public web tracking)', () => {
  it('{} is not found', async () => {
    expect((await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-not-found.json'))).outcome).toBe('not_found');
  });

  it('a CSRF refusal is an error naming Ekart and the field', async () => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-csrf-error.json'));
    expect(poll.error).toBe('ekart: request refused (csrfError.code EBADCSRFTOKEN)');
  });

  it('the excerpt the source cut is an error (invalid JSON), never a crash or a silent not found', async () => {
    const poll = await pollAnswer(adapter, 'FMPP4307095480', fixtureResponse('ekart', 'web-trackings-v2-excerpt-TRUNCATED.txt'));
    expect(poll).toMatchObject({ outcome: 'error', error: 'ekart: invalid JSON' });
  });
});
