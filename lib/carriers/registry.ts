import type { CarrierConfig } from '../config/index.ts';

export interface CarrierInfo {
  slug: string;
  name: string;
  kind: string;
  aliases: string[];
}

export interface DetectedCarrier {
  slug: string;
  name: string;
  /** 0..1: how specific the matching shape is; best first in detect()'s answer. */
  confidence: number;
}

/** Folds spelling of a slug or alias: case and surrounding space do not matter. */
function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * The supported carriers, looked up by slug or alias, and guessed from a consignment number.
 * Built from `config/carriers.yaml`; pure after construction.
 */
export class CarrierRegistry {
  private readonly byName = new Map<string, CarrierConfig>();
  private readonly shapes: { carrier: CarrierConfig; patterns: RegExp[] }[];

  constructor(private readonly carriers: readonly CarrierConfig[]) {
    for (const carrier of carriers) {
      this.byName.set(carrier.slug, carrier);
      for (const alias of carrier.aliases) this.byName.set(nameKey(alias), carrier);
    }
    this.shapes = [...carriers]
      .sort((a, b) => b.specificity - a.specificity)
      .map((carrier) => ({ carrier, patterns: carrier.awb_patterns.map((p) => new RegExp(p)) }));
  }

  /** Canonical slug for a slug or accepted alias, or null when unsupported. */
  resolve(name: string): string | null {
    return this.byName.get(nameKey(name))?.slug ?? null;
  }

  list(): CarrierInfo[] {
    return this.carriers.map(({ slug, name, kind, aliases }) => ({ slug, name, kind, aliases }));
  }

  slugs(): string[] {
    return this.carriers.map((c) => c.slug);
  }

  /** Carriers whose consignment shapes fit `awb`, most specific shape first. Never a reason to reject. */
  detect(awb: string): DetectedCarrier[] {
    const normalized = awb.trim().toUpperCase();
    const maxSpecificity = Math.max(1, ...this.carriers.map((c) => c.specificity));
    return this.shapes
      .filter(({ patterns }) => patterns.some((p) => p.test(normalized)))
      .map(({ carrier }) => ({
        slug: carrier.slug,
        name: carrier.name,
        confidence: Math.round((carrier.specificity / maxSpecificity) * 100) / 100,
      }));
  }
}
