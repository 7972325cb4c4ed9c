import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { distanceKm, loadPlaces, placeOf, zoneOf } from './index.ts';

describe('places', () => {
  it('knows the sandbox lanes\' pincodes with their district, state and coordinates', () => {
    const mumbai = placeOf('400001')!;
    expect(mumbai).toMatchObject({ pincode: '400001', district: 'Mumbai', state: 'Maharashtra', stateCode: 'MH', metro: true, remote: false });
    expect(mumbai.lat).toBeCloseTo(18.94, 1);
    for (const pin of ['110001', '560001', '700001', '600001', '500001', '380001', '411001', '302001', '226001', '682001', '781001', '141001', '248001']) {
      expect(placeOf(pin), pin).not.toBeNull();
    }
    expect(placeOf('999999')).toBeNull();
    expect(placeOf('abc')).toBeNull();
  });

  it('covers every state and union territory with a believable coordinate', () => {
    const all = loadPlaces().all();
    expect(all.length).toBeGreaterThan(19_000);
    const states = new Set(all.map((p) => p.stateCode));
    expect(states.size).toBeGreaterThanOrEqual(36);
    for (const p of all) {
      expect(p.lat).toBeGreaterThan(6);
      expect(p.lng).toBeGreaterThan(68);
    }
  });

  it('marks the North-East, J&K, Ladakh, the islands and hill districts remote', () => {
    expect(placeOf('781001')!.remote).toBe(true); // Guwahati, Assam
    expect(placeOf('194101')).toMatchObject({ stateCode: 'LA', remote: true }); // Leh
    expect(placeOf('744101')!.remote).toBe(true); // Port Blair
    const kinnaur = loadPlaces().all().find((p) => p.district === 'Kinnaur')!;
    expect(kinnaur.remote).toBe(true);
    expect(placeOf('110001')!.remote).toBe(false);
  });

  it('measures great-circle distances (Mumbai–Kolkata ~1,650 km)', () => {
    const km = distanceKm(placeOf('400001')!, placeOf('700001')!);
    expect(km).toBeGreaterThan(1600);
    expect(km).toBeLessThan(1700);
    expect(distanceKm(placeOf('400001')!, placeOf('400001')!)).toBe(0);
  });

  it('draws the couriers\' zones', () => {
    const p = (pin: string) => placeOf(pin)!;
    expect(zoneOf(p('110001'), p('110020'))).toBe('within_city');
    expect(zoneOf(p('400001'), p('411001'))).toBe('within_state');
    expect(zoneOf(p('400001'), p('700001'))).toBe('metro_to_metro');
    expect(zoneOf(p('302001'), p('226001'))).toBe('rest_of_india');
    expect(zoneOf(p('700001'), p('781001'))).toBe('special');
    expect(zoneOf(p('781001'), p('781005'))).toBe('within_city');
  });

  it('the committed table is what the pincode packages give', () => {
    expect(() => execFileSync(process.execPath, ['scripts/places/derive-pincodes.ts', '--check'], { stdio: 'pipe' })).not.toThrow();
  }, 60_000);
});
