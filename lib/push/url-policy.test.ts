import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isAllowedAddress, isPublicAddress, parseAllowedTargets, resolveEndpointHost, type Lookup } from './url-policy.ts';
import type { KeyMode } from '../schemas/index.ts';

const PUBLIC = ['8.8.8.8', '1.1.1.1', '203.0.114.9', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'];
const LOOPBACK = ['127.0.0.1', '127.53.0.1', '::1', '::ffff:127.0.0.1'];
const NOT_PUBLIC = [
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

/** What a developer opens for a receiver on their own machine. */
const OPENED_LOOPBACK = parseAllowedTargets('127.0.0.1/32, ::1');

describe('isPublicAddress / isAllowedAddress', () => {
  it.each(PUBLIC)('%s is public: allowed', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
    expect(isAllowedAddress(ip)).toBe(true);
  });

  it.each(LOOPBACK)('%s is loopback: refused unless the operator opened it', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip, parseAllowedTargets('127.0.0.0/8,::1/128'))).toBe(true);
  });

  it.each(NOT_PUBLIC)('%s is refused, whatever loopback the operator opened', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip)).toBe(false);
    expect(isAllowedAddress(ip, OPENED_LOOPBACK)).toBe(false);
  });
});

describe('parseAllowedTargets (WEBHOOK_ALLOWED_TARGETS)', () => {
  it('opens exactly the listed addresses and ranges, IPv4-mapped forms included', () => {
    const opened = parseAllowedTargets('127.0.0.1, 10.20.0.0/16 ,fd00::/8');
    expect(isAllowedAddress('127.0.0.1', opened)).toBe(true);
    expect(isAllowedAddress('::ffff:127.0.0.1', opened)).toBe(true);
    expect(isAllowedAddress('127.0.0.2', opened)).toBe(false);
    expect(isAllowedAddress('::1', opened)).toBe(false);
    expect(isAllowedAddress('10.20.3.4', opened)).toBe(true);
    expect(isAllowedAddress('10.21.0.1', opened)).toBe(false);
    expect(isAllowedAddress('fd00:ec2::254', opened)).toBe(true);
    expect(isAllowedAddress('::ffff:10.20.0.9', parseAllowedTargets('::ffff:10.20.0.0/112'))).toBe(true);
  });

  it('is empty when unset and names a bad entry', () => {
    expect(parseAllowedTargets(undefined)).toEqual([]);
    expect(parseAllowedTargets('  ')).toEqual([]);
    expect(() => parseAllowedTargets('127.0.0.1,localhost')).toThrow(/"localhost" is not an IP address or CIDR range/);
    expect(() => parseAllowedTargets('10.0.0.0/33')).toThrow(/10\.0\.0\.0\/33/);
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
    expect(ok('http://hooks.example.com:8080/in', 'test')).toBe('http://hooks.example.com:8080/in');
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
    expect(reason('https://127.0.0.1/in', 'live')).toBe('127.0.0.1 is a loopback address; webhook targets must be public addresses');
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

  it('test keys (free trials) get no more than live keys: no loopback, private or metadata', () => {
    expect(reason('http://127.0.0.1:6379/in', 'test')).toBe('127.0.0.1 is a loopback address; webhook targets must be public addresses');
    expect(reason('http://localhost:8123/?query=DROP', 'test')).toMatch(/loopback host/);
    expect(reason('http://[::1]:9092/', 'test')).toMatch(/loopback/);
    expect(reason('http://2130706433:8123/', 'test')).toMatch(/127\.0\.0\.1 is a loopback/);
    expect(reason('http://10.0.0.5/in', 'test')).toMatch(/private address/);
    expect(reason('http://169.254.169.254/', 'test')).toMatch(/link-local/);
    expect(reason('http://192.168.1.10:8080/', 'test')).toMatch(/private/);
    expect(reason('http://intranet/in', 'test')).toMatch(/not a public host name/);
  });

  it("the operator's opened targets, for every key mode alike (live keys still https only)", () => {
    expect(checkEndpointUrl('http://127.0.0.1:8080/in', 'test', OPENED_LOOPBACK)).toEqual({ ok: true, url: 'http://127.0.0.1:8080/in' });
    expect(checkEndpointUrl('http://localhost:8080/in', 'test', OPENED_LOOPBACK)).toEqual({ ok: true, url: 'http://localhost:8080/in' });
    expect(checkEndpointUrl('https://127.0.0.1:8443/in', 'live', OPENED_LOOPBACK)).toEqual({ ok: true, url: 'https://127.0.0.1:8443/in' });
    expect(checkEndpointUrl('http://127.0.0.1:8080/in', 'live', OPENED_LOOPBACK).ok).toBe(false);
    expect(checkEndpointUrl('http://10.0.0.5/in', 'test', OPENED_LOOPBACK).ok).toBe(false);
  });
});

describe('resolveEndpointHost', () => {
  const fixed = (addresses: string[]): Lookup => async () => addresses;

  it('returns every address when all are allowed', async () => {
    expect(await resolveEndpointHost('https://hooks.example.com/in', 'live', [], fixed(['8.8.8.8', '2606:4700::1111'])))
      .toEqual({ ok: true, url: 'https://hooks.example.com/in', addresses: ['8.8.8.8', '2606:4700::1111'] });
  });

  it('refuses the host if ANY address is not allowed, naming it', async () => {
    expect(await resolveEndpointHost('https://example.com/in', 'live', [], fixed(['8.8.8.8', '10.0.0.5'])))
      .toEqual({ ok: false, reason: 'refused: example.com resolves to 10.0.0.5, a private address' });
    for (const address of ['127.0.0.1', '169.254.169.254', '::1', '::ffff:10.0.0.1', 'fd00:ec2::254', '100.64.1.1']) {
      const result = await resolveEndpointHost('https://example.com/in', 'live', [], fixed([address]));
      expect(result.ok, address).toBe(false);
    }
  });

  it('test keys resolve like live keys: a name pointing at loopback is refused unless opened', async () => {
    expect(await resolveEndpointHost('http://127.0.0.1.nip.io/in', 'test', [], fixed(['127.0.0.1'])))
      .toEqual({ ok: false, reason: 'refused: 127.0.0.1.nip.io resolves to 127.0.0.1, a loopback address' });
    expect(await resolveEndpointHost('http://dev.example.com/in', 'test', OPENED_LOOPBACK, fixed(['127.0.0.1'])))
      .toEqual({ ok: true, url: 'http://dev.example.com/in', addresses: ['127.0.0.1'] });
    expect(await resolveEndpointHost('http://dev.example.com/in', 'test', OPENED_LOOPBACK, fixed(['192.168.0.7'])))
      .toEqual({ ok: false, reason: 'refused: dev.example.com resolves to 192.168.0.7, a private address' });
  });

  it('checks IP literals and localhost names without asking DNS, and the URL rules first', async () => {
    const never: Lookup = async () => { throw new Error('DNS must not be asked'); };
    expect(await resolveEndpointHost('http://127.0.0.1:9/in', 'test', OPENED_LOOPBACK, never)).toEqual({ ok: true, url: 'http://127.0.0.1:9/in', addresses: ['127.0.0.1'] });
    expect(await resolveEndpointHost('http://localhost:9/in', 'test', OPENED_LOOPBACK, never)).toEqual({ ok: true, url: 'http://localhost:9/in', addresses: ['127.0.0.1', '::1'] });
    // Only the opened loopback address is connected to.
    expect(await resolveEndpointHost('http://localhost:9/in', 'test', parseAllowedTargets('127.0.0.1'), never)).toEqual({ ok: true, url: 'http://localhost:9/in', addresses: ['127.0.0.1'] });
    expect((await resolveEndpointHost('http://localhost:9/in', 'test', [], never)).ok).toBe(false);
    expect(await resolveEndpointHost('https://[2606:4700::1111]/in', 'live', [], never)).toEqual({ ok: true, url: 'https://[2606:4700::1111]/in', addresses: ['2606:4700::1111'] });
    expect((await resolveEndpointHost('https://10.0.0.1/in', 'live', [], never)).ok).toBe(false);
    expect(await resolveEndpointHost('http://hooks.example.com/in', 'live', [], never))
      .toEqual({ ok: false, reason: expect.stringMatching(/https/) });
  });

  it('reports DNS failures and empty answers', async () => {
    const failing: Lookup = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    expect(await resolveEndpointHost('https://nowhere.example/in', 'live', [], failing))
      .toEqual({ ok: false, reason: 'DNS lookup of nowhere.example failed (ENOTFOUND)' });
    expect(await resolveEndpointHost('https://nowhere.example/in', 'live', [], fixed([])))
      .toEqual({ ok: false, reason: 'nowhere.example has no addresses' });
  });

  it('uses the system resolver by default', async () => {
    const result = await resolveEndpointHost('https://nonexistent-host.invalid/in', 'live');
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^DNS lookup of nonexistent-host\.invalid failed/) });
  });
});
