import { describe, expect, it } from 'vitest';
import { loadProductConfig } from '../config/index.ts';
import { CarrierRegistry } from './registry.ts';

const registry = new CarrierRegistry(loadProductConfig().carriers);

describe('carrier registry', () => {
  it('knows the 11 carriers of decisions.md', () => {
    expect(registry.slugs().sort()).toEqual([
      'bluedart', 'delhivery', 'dtdc', 'ekart', 'indiapost', 'professionalcouriers', 'shadowfax',
      'shiprocket', 'shreemaruti', 'speedpost', 'xpressbees',
    ]);
  });

  it.each([
    ['delhivery', 'delhivery'], ['DELHIVERY', 'delhivery'], ['blue-dart', 'bluedart'], ['blue_dart', 'bluedart'],
    ['bd', 'bluedart'], ['sr', 'shiprocket'], ['smc', 'shreemaruti'], ['shree_maruti', 'shreemaruti'],
    ['ip', 'indiapost'], ['india-post', 'indiapost'], ['sp', 'speedpost'], ['xb', 'xpressbees'],
    ['sfx', 'shadowfax'], ['e-kart', 'ekart'], ['tpc', 'professionalcouriers'],
    ['theprofessionalcouriers', 'professionalcouriers'], ['professional-couriers', 'professionalcouriers'],
  ])('resolves %s to %s', (name, slug) => {
    expect(registry.resolve(name)).toBe(slug);
  });

  it('rejects unknown names', () => {
    expect(registry.resolve('fedex')).toBeNull();
    expect(registry.resolve('')).toBeNull();
  });

  it.each([
    ['EE123456789IN', 'speedpost'],
    ['RK123456789IN', 'indiapost'],
    ['12345678901', 'bluedart'],
    ['FMPC0279658213', 'ekart'],
    ['PON8334106', 'professionalcouriers'],
    ['1234567890104', 'delhivery'],
    ['V01197967', 'dtdc'],
  ])('detects %s as %s first', (awb, slug) => {
    expect(registry.detect(awb)[0]?.slug).toBe(slug);
  });

  it('lists every carrier whose shape fits, the aggregator last', () => {
    const slugs = registry.detect('1234567890104').map((d) => d.slug);
    expect(slugs).toEqual(expect.arrayContaining(['delhivery', 'xpressbees', 'shreemaruti', 'shiprocket']));
    expect(slugs.at(-1)).toBe('shiprocket');
    expect(registry.detect('ee123456789in')[0]?.slug).toBe('speedpost');
  });

  it('returns nothing for shapes no carrier uses', () => {
    expect(registry.detect('ab')).toEqual([]);
  });
});
