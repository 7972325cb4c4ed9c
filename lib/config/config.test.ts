import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG_DIR, loadEnv, loadProductConfig } from './index.ts';

/** A scratch copy of config/ whose files a test may break. */
function scratchConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  cpSync(DEFAULT_CONFIG_DIR, dir, { recursive: true });
  return dir;
}

function edit(dir: string, file: string, change: (text: string) => string): void {
  const path = join(dir, file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

describe('configuration files', () => {
  it('loads the shipped config: 4 plans, 11 carriers, rules for each', () => {
    const config = loadProductConfig();
    expect(Object.keys(config.plans)).toEqual(['trial', 'starter', 'growth', 'business']);
    expect(config.plans.growth).toMatchObject({ lookups: 4000, burst_per_second: 10, daily_quota: 800, validity_days: 30 });
    expect(config.carriers).toHaveLength(11);
    expect(Object.keys(config.mappings.carriers)).toHaveLength(11);
  });

  it('names the file, the field and the expectation for a bad value', () => {
    const dir = scratchConfig();
    edit(dir, 'plans.yaml', (t) => t.replace('lookups: 4000', 'lookups: lots'));
    expect(() => loadProductConfig(dir)).toThrowError(ConfigError);
    expect(() => loadProductConfig(dir)).toThrowError(/plans\.yaml: field "plans\.growth\.lookups": .*number/);
  });

  it('rejects an unknown status in a mapping rule', () => {
    const dir = scratchConfig();
    edit(dir, 'mappings/dtdc.yaml', (t) => t.replace('status: delivered', 'status: arrived'));
    expect(() => loadProductConfig(dir)).toThrowError(/dtdc\.yaml: field "rules\.\d+\.status"/);
  });

  it('rejects invalid YAML, a missing carrier file and a duplicated alias', () => {
    const broken = scratchConfig();
    edit(broken, 'carriers.yaml', (t) => `${t}\n  - [unclosed`);
    expect(() => loadProductConfig(broken)).toThrowError(/carriers\.yaml is not valid YAML/);

    const dup = scratchConfig();
    edit(dup, 'carriers.yaml', (t) => t.replace('aliases: [shadow-fax, shadow_fax, sfx]', 'aliases: [shadow-fax, shadow_fax, bd]'));
    expect(() => loadProductConfig(dup)).toThrowError(/"bd" is used by both bluedart and shadowfax/);
  });

  it('rejects a bad regular expression in a consignment shape', () => {
    const dir = scratchConfig();
    edit(dir, 'carriers.yaml', (t) => t.replace("awb_patterns: ['^\\d{11}$', '^\\d{8,9}$']", () => "awb_patterns: ['^(\\d{11}$']"));
    expect(() => loadProductConfig(dir)).toThrowError(/awb_patterns\.0": a valid regular expression/);
  });
});

describe('environment', () => {
  it('gives the embedded defaults', () => {
    expect(loadEnv({})).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', DATA_DIR: './data', LOG_LEVEL: 'info' });
  });

  it('names the variable and the expectation', () => {
    expect(() => loadEnv({ PORT: 'eighty' })).toThrowError(/environment: field "PORT"/);
    expect(() => loadEnv({ KAFKA_BROKERS: 'a:1,,b:2' })).toThrowError(/KAFKA_BROKERS.*comma-separated/);
    expect(() => loadEnv({ ADMIN_TOKEN: 'short' })).toThrowError(/ADMIN_TOKEN.*16 characters/);
  });
});
