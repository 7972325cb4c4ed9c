import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isAllowedAddress, isPublicAddress, resolveEndpointHost, type Lookup } from './url-policy.ts';
import type { KeyMode } from '../schemas/index.ts';

const PUBLIC = ['8.8.8.8', '1.1.1.1', '203.0.114.9', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'];
const LOOPBACK = ['127.0.0.1', '127.53.0.1', '::1', '::ffff:127.0.0.1'];
const FORBIDDEN_EVEN_FOR_TEST = [
  '10.0.0.5', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', // private
  '169.254.169.254', '169.254.0.1', 'fe80::1', // link-local, cloud metadata (AWS, GCP, Azure IMDS)
  'fd00:ec2::254', 'fc00::1', // unique-local (AWS IMDS over IPv6)
  '100.64.0.1', '100.100.100.200', // CGNAT (Alibaba metadata)
  '168.63.129.16', // Azure WireServer
  '192.0.0.192', // reserved (Oracle Cloud metadata)
  '0.0.0.0', '::', // unspecified
  '224.0.0.1', 'ff02::1', '255.255.255.255', // multicast, broadcast
  '240.0.0.1', '192.0.2.1', '198.18.0.1', '2001:db8::1', // reserved / documentation / benchmarking
  '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.0.1', // IPv4-mapped forms
  '::a00:1', 'fec0::1', // deprecated IPv4-compatible and site-local IPv6
  '64:ff9b::a00:1', '2002:a00:1::1', // NAT64 / 6to4 wrapping of 10.0.0.1
  'not-an-ip', '', '127.1', 'fe80::1%eth0',
];

describe('isPublicAddress / isAllowedAddress', () => {
  it.each(PUBLIC)('%s is public, allowed for live and test keys', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
    expect(isAllowedAddress(ip, 'live')).toBe(true);
    expect(isAllowedAddress(ip, 'test')).toBe(true);
  });

  it.each(LOOPBACK)('%s is loopback: refused for live keys, allowed for test keys', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip, 'live')).toBe(false);
    expect(isAllowedAddress(ip, 'test')).toBe(true);
  });

  it.each(FORBIDDEN_EVEN_FOR_TEST)('%s is refused for live and test keys', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip, 'live')).toBe(false);
    expect(isAllowedAddress(ip, 'test')).toBe(false);
  });
});

describe('checkEndpointUrl', () => {
  const ok = (raw: string, mode: KeyMode) => {
    const result = checkEndpointUrl(raw, mode);
    if (!result.ok) throw new Error(`expected ${raw} to be accepted for ${mode}: ${result.reason}`);
    return result.url;
  };
  const reason = (raw: string, mode: KeyMode) => {
    const result = checkEndpointUrl(raw, mode);
    if (result.ok) throw new Error(`expected ${raw} to be refused for ${mode}`);
    return result.reason;
  };

  it('accepts https for live and http or https for test, normalized', () => {
    expect(ok('https://Hooks.Example.com/webhooks?x=1', 'live')).toBe('https://hooks.example.com/webhooks?x=1');
    expect(ok('https://hooks.example.com:8443/in', 'live')).toBe('https://hooks.example.com:8443/in');
    expect(ok('https://8.8.8.8/in', 'live')).toBe('https://8.8.8.8/in');
    expect(ok('https://[2606:4700::1111]/in', 'live')).toBe('https://[2606:4700::1111]/in');
    expect(ok('http://127.0.0.1:8080/in', 'test')).toBe('http://127.0.0.1:8080/in');
    expect(ok('http://localhost:8080/in', 'test')).toBe('http://localhost:8080/in');
    expect(ok('http://receiver.localhost/in', 'test')).toBe('http://receiver.localhost/in');
    expect(ok('http://[::1]:9/in', 'test')).toBe('http://[::1]:9/in');
    expect(ok('https://hooks.example.com/in', 'test')).toBe('https://hooks.example.com/in');
  });

  it('refuses malformed, overlong, credentialed and non-http URLs with a readable reason', () => {
    expect(reason('', 'live')).toMatch(/empty/);
    expect(reason('/relative/path', 'live')).toMatch(/absolute URL/);
    expect(reason('hooks.example.com/in', 'live')).toMatch(/absolute URL/);
    expect(reason(`https://hooks.example.com/${'a'.repeat(2048)}`, 'live')).toMatch(/longer than 2048/);
    expect(reason('https://user:pw@hooks.example.com/in', 'live')).toMatch(/user name or password/);
    expect(reason('https://user@hooks.example.com/in', 'test')).toMatch(/user name or password/);
    expect(reason('ftp://hooks.example.com/in', 'test')).toMatch(/scheme ftp is not allowed/);
    expect(reason('file:///etc/passwd', 'test')).toMatch(/scheme file is not allowed/);
    expect(reason('javascript:alert(1)', 'test')).toMatch(/scheme javascript/);
  });

  it('live keys: https only, no loopback, private, metadata or single-label hosts', () => {
    expect(reason('http://hooks.example.com/in', 'live')).toMatch(/https/);
    expect(reason('https://127.0.0.1/in', 'live')).toBe('127.0.0.1 is a loopback address; trk_live_ keys need a public address');
    expect(reason('https://localhost/in', 'live')).toMatch(/loopback host/);
    expect(reason('https://LOCALHOST./in', 'live')).toMatch(/loopback host/);
    expect(reason('https://api.localhost/in', 'live')).toMatch(/loopback host/);
    expect(reason('https://10.1.2.3/in', 'live')).toMatch(/10\.1\.2\.3 is a private address/);
    expect(reason('https://169.254.169.254/latest/meta-data', 'live')).toMatch(/link-local/);
    expect(reason('https://[fd00:ec2::254]/', 'live')).toMatch(/unique-local/);
    expect(reason('https://[::ffff:10.0.0.1]/', 'live')).toMatch(/private/);
    expect(reason('https://[::1]/', 'live')).toMatch(/loopback/);
    expect(reason('https://0.0.0.0/', 'live')).toMatch(/unspecified/);
    expect(reason('https://intranet/in', 'live')).toMatch(/not a public host name/);
    // The URL parser's other spellings of 127.0.0.1 are caught after normalization.
    expect(reason('https://2130706433/', 'live')).toMatch(/127\.0\.0\.1 is a loopback/);
    expect(reason('https://0x7f.1/', 'live')).toMatch(/127\.0\.0\.1 is a loopback/);
  });

  it('test keys: loopback yes, private and metadata still no', () => {
    expect(reason('http://10.0.0.5/in', 'test')).toMatch(/private address; trk_test_ keys may use public or loopback/);
    expect(reason('http://169.254.169.254/', 'test')).toMatch(/link-local/);
    expect(reason('http://192.168.1.10:8080/', 'test')).toMatch(/private/);
  });
});

describe('resolveEndpointHost', () => {
  const fixed = (addresses: string[]): Lookup => async () => addresses;

  it('returns every address when all are allowed', async () => {
    expect(await resolveEndpointHost('https://hooks.example.com/in', 'live', fixed(['8.8.8.8', '2606:4700::1111'])))
      .toEqual({ ok: true, addresses: ['8.8.8.8', '2606:4700::1111'] });
  });

  it('refuses the host if ANY address is not allowed, naming it', async () => {
    expect(await resolveEndpointHost('https://example.com/in', 'live', fixed(['8.8.8.8', '10.0.0.5'])))
      .toEqual({ ok: false, reason: 'refused: example.com resolves to 10.0.0.5, a private address' });
    for (const address of ['127.0.0.1', '169.254.169.254', '::1', '::ffff:10.0.0.1', 'fd00:ec2::254', '100.64.1.1']) {
      const result = await resolveEndpointHost('https://example.com/in', 'live', fixed([address]));
      expect(result.ok, address).toBe(false);
    }
  });

  it('test keys may resolve to loopback, not to private addresses', async () => {
    expect(await resolveEndpointHost('http://dev.example.com/in', 'test', fixed(['127.0.0.1'])))
      .toEqual({ ok: true, addresses: ['127.0.0.1'] });
    expect(await resolveEndpointHost('http://dev.example.com/in', 'test', fixed(['192.168.0.7'])))
      .toEqual({ ok: false, reason: 'refused: dev.example.com resolves to 192.168.0.7, a private address' });
  });

  it('checks IP literals and localhost names without asking DNS, and the URL rules first', async () => {
    const never: Lookup = async () => { throw new Error('DNS must not be asked'); };
    expect(await resolveEndpointHost('http://127.0.0.1:9/in', 'test', never)).toEqual({ ok: true, addresses: ['127.0.0.1'] });
    expect(await resolveEndpointHost('http://localhost:9/in', 'test', never)).toEqual({ ok: true, addresses: ['127.0.0.1', '::1'] });
    expect(await resolveEndpointHost('https://[2606:4700::1111]/in', 'live', never)).toEqual({ ok: true, addresses: ['2606:4700::1111'] });
    expect((await resolveEndpointHost('https://10.0.0.1/in', 'live', never)).ok).toBe(false);
    expect(await resolveEndpointHost('http://hooks.example.com/in', 'live', never))
      .toEqual({ ok: false, reason: expect.stringMatching(/https/) });
  });

  it('reports DNS failures and empty answers', async () => {
    const failing: Lookup = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    expect(await resolveEndpointHost('https://nowhere.example/in', 'live', failing))
      .toEqual({ ok: false, reason: 'DNS lookup of nowhere.example failed (ENOTFOUND)' });
    expect(await resolveEndpointHost('https://nowhere.example/in', 'live', fixed([])))
      .toEqual({ ok: false, reason: 'nowhere.example has no addresses' });
  });

  it('uses the system resolver by default', async () => {
    const result = await resolveEndpointHost('https://nonexistent-host.invalid/in', 'live');
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^DNS lookup of nonexistent-host\.invalid failed/) });
  });
});
