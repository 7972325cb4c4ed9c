import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AccessError } from '../../../lib/access/index.ts';
import type { ThrottleRule } from '../../../lib/throttle/index.ts';
import type { ApiDeps } from '../deps.ts';
import { methodNotAllowed } from '../errors.ts';
import { HOUR_MS } from '../../../lib/time/index.ts';
import { escapeHtml } from '../../../lib/html/index.ts';

const TrialFormSchema = z.object({ email: z.string().trim().max(254).pipe(z.email()) });

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
input,button{font-size:1rem;padding:.5rem}code{background:#f3f3f3;padding:.2rem .4rem;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-all}
.error{color:#a00}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function form(message = ''): string {
  return page('Try the tracking API free for 14 days', `
<p>One HTTP GET tracks a shipment of any of 11 Indian carriers. The trial gives 100 lookups over 14 days.</p>
${message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : ''}
<form method="post" action="/trial">
  <label for="email">Work e-mail</label><br>
  <input id="email" name="email" type="email" required autocomplete="email" size="32">
  <button type="submit">Get my trial key</button>
</form>
<p>Keys are for server-side code only. See the <a href="/docs">API reference</a>.</p>
<h2>Upgrade a trial key</h2>
<p>Starter, growth and business plans are paid online and work at once. Enter the first 16 characters of your key (its prefix, as our e-mails show it):</p>
<form method="get" action="/billing/renew">
  <label for="key">Key prefix</label><br>
  <input id="key" name="key" required minlength="16" maxlength="16" size="20">
  <input type="hidden" name="plan" value="starter">
  <button type="submit">Choose a plan</button>
</form>`);
}

/**
 * The self-serve trial page (contracts.md): one trial key per e-mail, shown once, issuing
 * rate-limited per client address.
 */
export function registerTrialRoutes(app: FastifyInstance, deps: ApiDeps): void {
  // Counted in the store (Redis or DATA_DIR), so a restart does not reset an address's allowance.
  const rule: ThrottleRule = { name: 'trial', limit: deps.trialsPerAddressPerHour ?? 5, windowMs: HOUR_MS };

  // The HTML form posts application/x-www-form-urlencoded: only this page parses it (the admin
  // and /v1 APIs take JSON only).
  app.register(async (trial) => {
    await trial.register(formbody);

    trial.get('/trial', async (_request, reply) => reply.type('text/html; charset=utf-8').send(form()));

    trial.post('/trial', async (request, reply) => {
      // Every answer of this page may carry a key or an e-mail address: never cached anywhere.
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store');
      const parsed = TrialFormSchema.safeParse(request.body ?? {});
      if (!parsed.success) return reply.code(400).send(form('Please enter a valid e-mail address.'));

      const now = deps.clock();
      const throttled = await deps.throttle.check(rule, request.ip, now);
      if (throttled.blocked) {
        return reply.code(429).header('Retry-After', throttled.retryAfterSeconds).send(form('Too many trial keys were requested from your network. Try again in an hour.'));
      }
      try {
        const { key, record } = await deps.access.issueTrial({ email: parsed.data.email, mode: 'live' }, new Date(now));
        await deps.throttle.record(rule, request.ip, now);
        return reply.code(201).send(page('Your trial key', `
<p>This key is shown once. Store it now: we keep only its hash.</p>
<p><code id="api-key">${escapeHtml(key)}</code></p>
<p>Valid until ${escapeHtml(record.period_end)} for ${record.lookups_limit} lookups.</p>
<pre>curl -H "X-API-Key: ${escapeHtml(key)}" ${escapeHtml(`${request.protocol}://${request.host}`)}/v1/usage</pre>
<p>Need more? <a id="upgrade" href="/billing/renew?key=${escapeHtml(record.prefix)}&amp;plan=starter">Upgrade this key to a paid plan</a>: it works at once.</p>`));
      } catch (err) {
        if (err instanceof AccessError && err.reason === 'trial_exists') {
          return reply.code(409).send(form('A trial key was already issued to this e-mail address.'));
        }
        throw err;
      }
    });

    methodNotAllowed(trial, '/trial', ['GET', 'POST']);
  });
}
