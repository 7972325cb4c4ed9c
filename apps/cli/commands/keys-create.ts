/** keys create → POST /admin/keys (the only answer that shows the full key). */
import { positiveIntOption, requiredOption, stringOption, type Command } from './command.ts';
import { UsageError } from './usage.ts';

export const keysCreate: Command = {
  words: ['keys', 'create'],
  options: {
    plan: { type: 'string' },
    mode: { type: 'string' },
    email: { type: 'string' },
    'lookups-limit': { type: 'string' },
    'daily-quota': { type: 'string' },
    burst: { type: 'string' },
    'period-start': { type: 'string' },
    'period-end': { type: 'string' },
  },
  request({ args, values }) {
    if (args.length > 0) throw new UsageError(`keys create takes no positional arguments, got: ${args.join(' ')}.`);
    // Plan, mode, e-mail and dates are checked by the API, so the rules live in one place.
    const body: Record<string, string | number> = {
      plan: requiredOption(values, 'plan', 'keys create'),
      mode: requiredOption(values, 'mode', 'keys create'),
      email: requiredOption(values, 'email', 'keys create'),
    };
    const optional: [string, string | number | undefined][] = [
      ['lookups_limit', positiveIntOption(values, 'lookups-limit')],
      ['daily_quota', positiveIntOption(values, 'daily-quota')],
      ['burst_per_second', positiveIntOption(values, 'burst')],
      ['period_start', stringOption(values, 'period-start')],
      ['period_end', stringOption(values, 'period-end')],
    ];
    for (const [field, value] of optional) if (value !== undefined) body[field] = value;
    return { method: 'POST', path: '/admin/keys', body };
  },
};
