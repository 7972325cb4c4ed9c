import type { CarrierConfig } from '../config/index.ts';

export interface CarrierInfo {
  slug: string;
  name: string;
  kind: string;
  aliases: string[];
}

/** Folds spelling of a slug or alias: case and surrounding space do not matter. */
function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * The supported carriers, looked up by slug or alias. Built from `config/carriers.yaml`; pure after
 * construction. Guessing the carrier from a consignment number is lib/detect's `CarrierDetector`.
 */
export class CarrierRegistry {
  private readonly byName = new Map<string, CarrierConfig>();

  private readonly carriers: readonly CarrierConfig[];
  constructor(carriers: readonly CarrierConfig[]) {
    this.carriers = carriers;
    for (const carrier of carriers) {
      this.byName.set(carrier.slug, carrier);
      for (const alias of carrier.aliases) this.byName.set(nameKey(alias), carrier);
    }
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
}
