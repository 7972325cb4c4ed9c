import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import {
  CarrierMappingFileSchema, CarriersFileSchema, CommonMappingFileSchema, EnvSchema, NdrFileSchema, SandboxEnvSchema,
  DEFAULT_CONFIG_DIR, NoticeTemplatesFileSchema, PlansFileSchema, type NoticeTemplates, type CarrierConfig, type CarrierMapping, type Env,
  type MappingRule, type NdrRules,
  type Plans,
} from './schemas.ts';

/** A configuration problem, worded so an operator can fix the file without reading code. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeIssues(source: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : '(top level)';
    return `  ${source}: field "${field}": ${issue.message}`;
  });
  return `Invalid configuration in ${source}:\n${lines.join('\n')}`;
}

/** Validates `value` against `schema`, throwing a ConfigError naming the source, field and expectation. */
export function validateConfig<S extends z.ZodType>(schema: S, value: unknown, source: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ConfigError(describeIssues(source, result.error));
  return result.data;
}

function readYaml(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(err as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new ConfigError(`Configuration file ${path} is not valid YAML: ${(err as Error).message}`);
  }
}

/** The one place the environment is read (docs/operators/configuration.md lists every variable). */
export function loadEnv(env: NodeJS.ProcessEnv = process.env): Env {
  return validateConfig(EnvSchema, env, 'environment');
}

export function loadSandboxEnv(env: NodeJS.ProcessEnv = process.env): Env {
  return validateConfig(SandboxEnvSchema, env, 'environment');
}

export function loadPlans(configDir: string): Plans {
  const path = join(configDir, 'plans.yaml');
  return validateConfig(PlansFileSchema, readYaml(path), path).plans;
}

export function loadNoticeTemplates(configDir: string): NoticeTemplates {
  const path = join(configDir, 'notices.yaml');
  return validateConfig(NoticeTemplatesFileSchema, readYaml(path), path);
}

export function loadCarriers(configDir: string): CarrierConfig[] {
  const path = join(configDir, 'carriers.yaml');
  const carriers = validateConfig(CarriersFileSchema, readYaml(path), path).carriers;
  const seen = new Map<string, string>();
  for (const carrier of carriers) {
    for (const name of [carrier.slug, ...carrier.aliases]) {
      const key = name.toLowerCase();
      const owner = seen.get(key);
      if (owner) throw new ConfigError(`Invalid configuration in ${path}: name "${name}" is used by both ${owner} and ${carrier.slug}`);
      seen.set(key, carrier.slug);
    }
  }
  return carriers;
}

export interface MappingConfig {
  common: MappingRule[];
  ndr: NdrRules;
  carriers: Record<string, CarrierMapping>;
}

/** Loads `config/mappings/`: `_common.yaml`, `_ndr.yaml` and one file per carrier slug. */
export function loadMappings(configDir: string, carrierSlugs: readonly string[]): MappingConfig {
  const dir = join(configDir, 'mappings');
  const commonPath = join(dir, '_common.yaml');
  const ndrPath = join(dir, '_ndr.yaml');
  const common = validateConfig(CommonMappingFileSchema, readYaml(commonPath), commonPath).before;
  const ndr = validateConfig(NdrFileSchema, readYaml(ndrPath), ndrPath);
  const carriers: Record<string, CarrierMapping> = {};
  const files = new Set(readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.startsWith('_')));
  for (const slug of carrierSlugs) {
    const file = `${slug}.yaml`;
    const path = join(dir, file);
    if (!files.has(file)) throw new ConfigError(`Missing mapping rules ${path} for carrier "${slug}"`);
    const mapping = validateConfig(CarrierMappingFileSchema, readYaml(path), path);
    if (mapping.carrier !== slug) {
      throw new ConfigError(`Invalid configuration in ${path}: field "carrier": expected "${slug}", got "${mapping.carrier}"`);
    }
    carriers[slug] = mapping;
    files.delete(file);
  }
  if (files.size) throw new ConfigError(`Mapping files for unknown carriers in ${dir}: ${[...files].join(', ')}`);
  return { common, ndr, carriers };
}

export interface ProductConfig {
  plans: Plans;
  carriers: CarrierConfig[];
  mappings: MappingConfig;
}

/** Everything in `config/`, validated. Throws ConfigError on the first bad file. */
export function loadProductConfig(configDir = DEFAULT_CONFIG_DIR): ProductConfig {
  const plans = loadPlans(configDir);
  const carriers = loadCarriers(configDir);
  const mappings = loadMappings(configDir, carriers.map((c) => c.slug));
  return { plans, carriers, mappings };
}
