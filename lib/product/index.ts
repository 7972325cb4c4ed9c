import { CarrierRegistry } from '../carriers/registry.ts';
import { DEFAULT_CONFIG_DIR, loadProductConfig, type ProductConfig } from '../config/index.ts';
import { CarrierDetector } from '../detect/index.ts';
import { compileRuleSet, type RuleSet } from '../normalize/index.ts';

/** Everything the product's rules are made of, loaded and validated once at start. */
export interface Product {
  config: ProductConfig;
  registry: CarrierRegistry;
  /** Carrier auto-detection from the carriers' shapes and sample numbers. */
  detector: CarrierDetector;
  rules: RuleSet;
}

export function loadProduct(configDir: string = DEFAULT_CONFIG_DIR): Product {
  const config = loadProductConfig(configDir);
  return { config, registry: new CarrierRegistry(config.carriers), detector: new CarrierDetector(config.carriers), rules: compileRuleSet(config.mappings) };
}
