import type { CarrierConfig } from '../config/index.ts';
import type { Awb } from '../schemas/index.ts';
import { shapeOf } from './shape.ts';

/** One carrier that may own a number, with how likely (contracts.md: GET /v1/carriers/detect). */
export interface DetectCandidate {
  slug: string;
  name: string;
  /**
   * The share, among the sample numbers (every carrier's `sample_awbs`) of the carriers whose shapes
   * fit, of those that belong to this carrier, taken over the numbers most like the one asked
   * about: the same leading letters and shape (`EE` + `L2D9L2`); when the sample has none, the same
   * shape (runs of digits and letters, same lengths); then the same runs whatever their lengths;
   * then all of them. 0..1, two decimals.
   */
  confidence: number;
}

/** Which sample numbers a confidence was measured over (for docs and tests). */
export type ConfidenceBasis = 'same_series' | 'same_shape' | 'same_runs' | 'all_fitting' | 'none';

export interface Detection {
  /** Fitting carriers, most likely first (confidence, then the configured specificity). */
  candidates: DetectCandidate[];
  basis: ConfidenceBasis;
  /** How many sample numbers the confidences are shares of. */
  sampleSize: number;
}

interface CarrierShapes {
  carrier: CarrierConfig;
  patterns: RegExp[];
}

interface SampleNumber {
  slug: string;
  signature: string;
  skeleton: string;
  series: string | null;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * Carrier auto-detection from `config/carriers.yaml`: which carriers' shapes fit a number, and a
 * confidence for each measured on the configured sample of real-shaped numbers. Pure after
 * construction; the probing that settles an ambiguity is the caller's (it needs carrier I/O).
 */
export class CarrierDetector {
  private readonly shapes: CarrierShapes[];
  private readonly sample: SampleNumber[];

  constructor(carriers: readonly CarrierConfig[]) {
    this.shapes = carriers.map((carrier) => ({
      carrier,
      patterns: [...(carrier.detect_by_awb_patterns ? carrier.awb_patterns : []), ...carrier.detect_patterns].map((p) => new RegExp(p)),
    }));
    this.sample = carriers.flatMap((c) => c.sample_awbs.map((awb) => ({ slug: c.slug, ...shapeOf(awb) })));
  }

  /** Every sample number with its carrier (the data the confidences come from). */
  sampleNumbers(): { slug: string; awb: Awb }[] {
    return this.shapes.flatMap(({ carrier }) => carrier.sample_awbs.map((awb) => ({ slug: carrier.slug, awb })));
  }

  /**
   * The carriers whose detection shapes fit `awb` (none: no carrier can be guessed). The shapes are
   * written for the canonical (upper-case) number, the form an Awb holds.
   */
  detect(awb: Awb): Detection {
    const fitting = this.shapes.filter(({ patterns }) => patterns.some((p) => p.test(awb)));
    if (fitting.length === 0) return { candidates: [], basis: 'none', sampleSize: 0 };
    const slugs = new Set(fitting.map((f) => f.carrier.slug));
    const { signature, skeleton, series } = shapeOf(awb);
    const pool = this.sample.filter((s) => slugs.has(s.slug));
    const levels: [ConfidenceBasis, SampleNumber[]][] = [
      ['same_series', series === null ? [] : pool.filter((s) => s.series === series)],
      ['same_shape', pool.filter((s) => s.signature === signature)],
      ['same_runs', pool.filter((s) => s.skeleton === skeleton)],
      ['all_fitting', pool],
    ];
    const [basis, measured] = levels.find(([, numbers]) => numbers.length > 0) ?? ['none', []];
    const share = (slug: string) => measured.length === 0
      ? 1 / fitting.length
      : measured.filter((s) => s.slug === slug).length / measured.length;
    const candidates = fitting
      .map(({ carrier }) => ({ carrier, exact: share(carrier.slug) }))
      .sort((a, b) => b.exact - a.exact || b.carrier.specificity - a.carrier.specificity)
      .map(({ carrier, exact }) => ({ slug: carrier.slug, name: carrier.name, confidence: round2(exact) }));
    return { candidates, basis, sampleSize: measured.length };
  }
}
