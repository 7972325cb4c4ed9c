// temporary experiment: profile one server under 50-connection load
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import autocannon from 'autocannon';
const [which, seconds = '8', profile = '1'] = process.argv.slice(2);
const tmp = mkdtempSync(join(tmpdir(), 'exp-'));
const env: NodeJS.ProcessEnv = { ...process.env, ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef', DATA_DIR: join(tmp, 'data') };
delete env.REDIS_URL;
if (which === 'redis') env.REDIS_URL = 'redis://127.0.0.1:6380';
if (which === 'bare') { writeFileSync(join(tmp, 'b.json'), process.env.BODY ?? '{}'); env.BENCH_BODY_FILE = join(tmp, 'b.json'); }
if (process.env.LL) env.LOG_LEVEL = process.env.LL;
const child = fork(join('bench/servers', which === 'bare' ? 'bare.ts' : 'api.ts'), [], { env, execArgv: ['--import', import.meta.resolve('tsx'), ...(profile === '1' ? ['--cpu-prof', `--cpu-prof-dir=${tmp}/prof`] : [])], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const ready = await new Promise<{ url: string; adminToken?: string }>((r) => child.on('message', (m: any) => m.type === 'ready' && r(m)));
let headers: Record<string, string> = {};
const path = '/v1/track/delhivery/1234567890102';
if (which !== 'bare') {
  const res = await fetch(`${ready.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ready.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ plan: 'business', mode: 'test', email: 'x@example.com', lookups_limit: 1e9, daily_quota: 1e9, burst_per_second: 1e9 }) });
  headers = { 'x-api-key': ((await res.json()) as any).key };
  await fetch(ready.url + path, { headers });
  const body = await (await fetch(ready.url + path, { headers })).text();
  writeFileSync('/tmp/exp-body.json', body);
}
const cpu = () => new Promise<number>((r) => { child.once('message', (m: any) => r(m.user + m.system)); child.send({ type: 'cpu' }); });
await autocannon({ url: ready.url + path, connections: 50, duration: 3, headers });
const c0 = await cpu();
const res = await autocannon({ url: ready.url + path, connections: 50, duration: Number(seconds), headers });
const c1 = await cpu();
console.log(`${which}: ${Math.round(res.requests.total / res.duration)} req/s, non2xx ${res.non2xx}, cpu/request ${((c1 - c0) / res.requests.total).toFixed(1)} µs, total ${res.requests.total}`);
child.send({ type: 'stop' });
await new Promise((r) => child.on('exit', r));
if (profile === '1') { const d = `${tmp}/prof`; const f = readdirSync(d).sort((a, b) => statSync(join(d, b)).size - statSync(join(d, a)).size)[0]; console.log(join(d, f!)); }
