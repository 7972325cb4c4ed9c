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
});
