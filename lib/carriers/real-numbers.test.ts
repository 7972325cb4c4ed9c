/**
 * The consignment shapes of config/carriers.yaml against numbers real bodies carry
 * (../shared/spec/real-bodies and carrier-formats.md "Corrections from real bodies"): each is
 * detected as a candidate of the carrier that issued it.
 */
import { describe, expect, it } from 'vitest';
import { requireAwb } from '../schemas/index.ts';
import { product } from '../testutil/product.ts';

const detector = product.detector;

describe('real consignment numbers fit their carrier\'s shapes', () => {
  it.each([
    ['26805710004126', 'delhivery'], // real Delhivery body (Amritsar)
    ['84108410000151', 'delhivery'], // real Delhivery staging body
    ['1091188857722', 'delhivery'], // Delhivery number relayed by Shiprocket's real answer
    ['44330038841', 'bluedart'], // real RoutingServlet body
    ['B32242001', 'dtdc'], // DTDC's documented sample
    ['7D9128969', 'dtdc'], // digit first, 9 characters (corrections)
    ['SF100000022431JIF', 'shadowfax'], // real staging body: 17 characters
    ['141123221084922', 'xpressbees'], // Xpressbees number relayed by Shiprocket's real answer
    ['FMPP4307095480', 'ekart'], // real web-tracking excerpt
    ['JH123456789IN', 'speedpost'], // Speed Post numbers are not only EE…IN (corrections)
    ['EE123456789IN', 'speedpost'],
  ])('%s is a %s number', (awb, slug) => {
    expect(detector.detect(requireAwb(awb)).candidates.map((d) => d.slug)).toContain(slug);
  });

  it('a JH… article is Speed Post first, India Post second', () => {
    expect(detector.detect(requireAwb('JH123456789IN')).candidates.map((d) => d.slug).slice(0, 2)).toEqual(['speedpost', 'indiapost']);
  });
});
