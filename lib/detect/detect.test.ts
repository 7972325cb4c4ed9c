import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_DIR, loadProductConfig } from '../config/index.ts';
import { requireAwb } from '../schemas/index.ts';
import { CarrierDetector } from './detect.ts';
import { MAX_PROBES, probeCandidates } from './probe.ts';
import { shapeOf } from './shape.ts';

const carriers = loadProductConfig(DEFAULT_CONFIG_DIR).carriers;
const detector = new CarrierDetector(carriers);

describe('shapeOf', () => {
  it.each([
    ['EE123450102IN', 'L2D9L2', 'LDL', 'EE L2D9L2'],
    ['1234567890102', 'D13', 'D', null],
    ['7D9128969', 'D1L1D7', 'DLD', null],
    ['AB-12', 'L2-1D2', 'L-D', 'AB L2-1D2'],
  ])('%s → %s (%s, series %s)', (awb, signature, skeleton, series) => {
    expect(shapeOf(awb)).toEqual({ signature, skeleton, series });
  });
});

describe('CarrierDetector', () => {
  it.each([
    ['EE123456789IN', 'speedpost'],
    ['RK123456789IN', 'indiapost'],
    ['12345678901', 'bluedart'],
    ['FMPC0279658213', 'ekart'],
    ['PON8334106', 'professionalcouriers'],
    ['1234567890104', 'delhivery'],
    ['V01197967', 'dtdc'],
  ])('detects %s as %s first', (awb, slug) => {
    expect(detector.detect(requireAwb(awb)).candidates[0]?.slug).toBe(slug);
  });

  it('lists every carrier whose shape fits, the aggregator last', () => {
    const slugs = detector.detect(requireAwb('1234567890104')).candidates.map((d) => d.slug);
    expect(slugs).toEqual(expect.arrayContaining(['delhivery', 'xpressbees', 'shreemaruti', 'shiprocket']));
    expect(slugs.at(-1)).toBe('shiprocket');
    expect(detector.detect(requireAwb('ee123456789in')).candidates[0]?.slug).toBe('speedpost');
  });

  it('returns nothing for shapes no carrier uses', () => {
    expect(detector.detect(requireAwb('ab12')).candidates).toEqual([]);
  });

  it('fits every sample number and example to its own carrier (the config is consistent)', () => {
    for (const c of carriers) {
      for (const awb of [...c.sample_awbs, c.example_awb!]) {
        expect(detector.detect(awb).candidates.map((d) => d.slug), `${c.slug} ${awb}`).toContain(c.slug);
      }
    }
  });

  it('makes confidences shares of the sample: they sum to 1 over the candidates', () => {
    for (const { awb } of detector.sampleNumbers()) {
      const total = detector.detect(awb).candidates.reduce((sum, c) => sum + c.confidence, 0);
      expect(total).toBeCloseTo(1, 1);
    }
  });

  it('measures the share among numbers of the same shape, then of the same runs, then of all fitting ones', () => {
    // Speed Post's EE series against India Post's RK: the same shape, told apart by the letters.
    const postal = detector.detect(requireAwb('EE987654321IN'));
    expect(postal.basis).toBe('same_series');
    expect(postal.candidates.slice(0, 2)).toMatchObject([{ slug: 'speedpost', confidence: 1 }, { slug: 'indiapost', confidence: 0 }]);
    expect(detector.detect(requireAwb('RK987654321IN')).candidates[0]).toMatchObject({ slug: 'indiapost', confidence: 1 });
    expect(detector.detect(requireAwb('26805710004126'))).toMatchObject({ basis: 'same_shape', sampleSize: 4 });
    // No 10-letter + 1-digit sample: compared with the letter-then-digit numbers.
    expect(detector.detect(requireAwb('SFABCDEFGH1'))).toMatchObject({ basis: 'same_runs' });
    expect(detector.detect(requireAwb('AB12CD34'))).toMatchObject({ basis: 'all_fitting' });
  });

  it('names the right carrier first for most of the sample (top-1 share measured here)', () => {
    const sample = detector.sampleNumbers();
    const right = sample.filter(({ slug, awb }) => detector.detect(awb).candidates[0]?.slug === slug).length;
    // The misses: 14-digit Xpressbees numbers are outnumbered by Delhivery's (probing settles it).
    expect(right / sample.length).toBeGreaterThanOrEqual(0.9);
  });

  it('breaks equal shares by the configured specificity', () => {
    // A postal series the sample does not hold: measured on the shape, 3 numbers each.
    expect(detector.detect(requireAwb('EM123456789IN')).candidates.slice(0, 2)).toEqual([
      { slug: 'speedpost', name: 'Speed Post', confidence: 0.5 },
      { slug: 'indiapost', name: 'India Post', confidence: 0.5 },
    ]);
  });

  it('leaves the aggregator out of shapes its catch-all pattern cannot tell apart, and finds nothing for them', () => {
    expect(detector.detect(requireAwb('ABCD')).candidates).toEqual([]);
    expect(detector.detect(requireAwb('HELLO-WORLD')).candidates).toEqual([]);
    expect(detector.detect(requireAwb('788829354408')).candidates[0]).toEqual({ slug: 'shiprocket', name: 'Shiprocket', confidence: 1 });
  });

  it('reads numbers case- and space-insensitively', () => {
    expect(detector.detect(requireAwb(' ee123456789in '))).toEqual(detector.detect(requireAwb('EE123456789IN')));
  });
});

describe('probeCandidates', () => {
  const found = { kind: 'found' as const };
  it('stops at the first carrier that knows the number', async () => {
    const asked: string[] = [];
    const outcome = await probeCandidates(['a', 'b', 'c'], async (slug) => {
      asked.push(slug);
      return slug === 'b' ? found : { kind: 'not_found' };
    });
    expect(outcome).toEqual({ kind: 'found', slug: 'b', answer: found, tried: ['a', 'b'] });
    expect(asked).toEqual(['a', 'b']);
  });

  it(`asks at most ${MAX_PROBES} carriers`, async () => {
    const asked: string[] = [];
    const outcome = await probeCandidates(['a', 'b', 'c', 'd'], async (slug) => {
      asked.push(slug);
      return { kind: 'not_found' };
    });
    expect(outcome).toEqual({ kind: 'not_found', tried: ['a', 'b', 'c'] });
    expect(asked).toEqual(['a', 'b', 'c']);
  });

  it('goes past a carrier that is down, and reports it when no one else knows the number', async () => {
    const down = await probeCandidates(['a', 'b'], async (slug) => (slug === 'a' ? { kind: 'upstream_error', reason: 'HTTP 503' } : { kind: 'not_found' }));
    expect(down).toEqual({ kind: 'upstream_error', tried: ['a', 'b'], unreachable: ['a'], reason: 'HTTP 503' });
    const later = await probeCandidates(['a', 'b'], async (slug) => (slug === 'a' ? { kind: 'upstream_error', reason: 'x' } : found));
    expect(later).toMatchObject({ kind: 'found', slug: 'b' });
  });
});
