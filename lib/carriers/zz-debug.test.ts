import { it } from 'vitest';
import { startSandbox } from '../sandbox/server.ts';
import { createCarrierPoller } from './poll.ts';
import { answer } from '../testing/product.ts';
it('debug', async () => {
  const sb = await startSandbox({});
  const p = createCarrierPoller({ sandboxUrl: sb.url, env: {} });
  const [carrier, awb] = (process.env.DBG ?? 'delhivery:123456780121').split(':') as [string, string];
  const poll = await p.poll(carrier, awb, { mode: 'test' });
  console.log(JSON.stringify(poll.scans, null, 1));
  if (poll.outcome === 'ok') { const r = answer(poll); console.log(JSON.stringify({status: r.status, insights: r.insights, events: r.events.map(e => [e.timestamp, e.status, e.code, e.reason_code, e.status_text, e.description])}, null, 1)); }
  else console.log(poll.outcome, poll.error);
  await p.close(); await sb.close();
});
