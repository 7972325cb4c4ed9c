/** keys renew <prefix> [--plan <plan>] → POST /admin/keys/<prefix>/renew. */
import { keyPath } from './admin-client.ts';
import { onePrefix, stringOption, type Command } from './command.ts';

export const keysRenew: Command = {
  words: ['keys', 'renew'],
  options: { plan: { type: 'string' } },
  request({ args, values }) {
    const prefix = onePrefix(args, 'keys renew');
    const plan = stringOption(values, 'plan');
    return { method: 'POST', path: keyPath(prefix, 'renew'), body: plan === undefined ? {} : { plan } };
  },
};
