import { createHash } from 'node:crypto';
import type { MappingConfig, MappingRule } from '../config/index.ts';
import type { EventCode, NdrReason, Status } from '../schemas/index.ts';
import { memoizeText, memoizeTexts3 } from './memo.ts';
import { matchKey, wordText } from './text.ts';

/** What a matching rule says about one raw scan. */
export interface ScanMapping {
  status: Status;
  code: Exclude<EventCode, 'unknown'>;
  reason?: NdrReason;
}

interface CompiledPattern {
  key: string;
  anchored: boolean;
}

interface CompiledRule {
  text: CompiledPattern[] | null;
  remarks: CompiledPattern[] | null;
  rawCodes: Set<string> | null;
  mapping: ScanMapping;
}

export interface CarrierRules {
  carrier: string;
  /**
   * Whether a raw code marks a scan as part of the return journey (Delhivery's ScanType RT, every
   * Xpressbees code starting "RT-": `return_leg_codes` entries ending in `*` are prefixes).
   */
  isReturnLeg(rawCode: string | null): boolean;
  /** The first rule matching the scan, or null for an unmapped scan. */
  match(rawStatus: string, rawCode: string | null, remarks: string | null): ScanMapping | null;
}

export interface RuleSet {
  /** Content hash of every rule: carried on each event so replay can tell rule sets apart. */
  mappingVersion: string;
  forCarrier(carrier: string): CarrierRules;
  /** NDR reason of a failed-attempt or hold remark: word stems, first reason wins, `other` otherwise. */
  ndrReason(remark: string): NdrReason;
}

function compilePatterns(patterns: string[] | undefined): CompiledPattern[] | null {
  if (!patterns) return null;
  return patterns.map((p) => ({ anchored: p.startsWith('^'), key: matchKey(p.startsWith('^') ? p.slice(1) : p) }));
}

function matchesAny(key: string, patterns: CompiledPattern[]): boolean {
  for (const p of patterns) {
    if (p.anchored ? key.startsWith(p.key) : key.includes(p.key)) return true;
  }
  return false;
}

function compileRule(rule: MappingRule): CompiledRule {
  return {
    text: compilePatterns(rule.when.text),
    remarks: compilePatterns(rule.when.remarks),
    rawCodes: rule.when.raw_code ? new Set(rule.when.raw_code.map((c) => c.toLowerCase())) : null,
    mapping: { status: rule.status, code: rule.code, ...(rule.reason ? { reason: rule.reason } : {}) },
  };
}

/**
 * `return_leg_codes` as a test: exact codes, and prefixes written with a trailing `*` (a carrier's
 * return-leg family, "RT-*", has more members than any feed seen so far shows).
 */
function compileReturnLegCodes(codes: string[]): (rawCode: string | null) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const code of codes.map((c) => c.trim().toLowerCase())) {
    if (code.endsWith('*')) prefixes.push(code.slice(0, -1));
    else exact.add(code);
  }
  return (rawCode) => {
    if (rawCode === null) return false;
    const code = rawCode.trim().toLowerCase();
    return exact.has(code) || prefixes.some((prefix) => code.startsWith(prefix));
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A stem matches at the start of a word; a trailing $ makes it a whole word. */
function compileStems(stems: string[]): RegExp {
  const alternatives = stems.map((stem) => {
    const whole = stem.endsWith('$');
    const words = wordText(whole ? stem.slice(0, -1) : stem).trim();
    return escapeRegExp(words) + (whole ? '(?= )' : '');
  });
  return new RegExp(` (?:${alternatives.join('|')})`);
}

/** The first rule matching a scan, or null when none does (an unmapped scan). */
function firstMatch(rules: CompiledRule[], rawStatus: string, rawCode: string | null, remarks: string | null): ScanMapping | null {
  const textKey = matchKey(rawStatus);
  const code = rawCode?.trim().toLowerCase() ?? null;
  const remarksKey = remarks === null ? null : matchKey(remarks);
  for (const rule of rules) {
    if (rule.rawCodes && (code === null || !rule.rawCodes.has(code))) continue;
    if (rule.text && !matchesAny(textKey, rule.text)) continue;
    if (rule.remarks && (remarksKey === null || !matchesAny(remarksKey, rule.remarks))) continue;
    return rule.mapping;
  }
  return null;
}

/**
 * Changes of the mapping output that no configuration shows: bump when the code changes what the
 * same rules produce, so mapping_version (and replay, and the writer's "stored under another
 * version") sees it. 2: event_id covers the location (event-id.ts).
 */
const OUTPUT_REVISION = 2;

export function compileRuleSet(config: MappingConfig): RuleSet {
  const mappingVersion = createHash('sha256')
    .update(JSON.stringify({ common: config.common, ndr: config.ndr, carriers: config.carriers, revision: OUTPUT_REVISION }))
    .digest('hex')
    .slice(0, 12);
  const common = config.common.map(compileRule);
  const byCarrier = new Map<string, CarrierRules>();

  for (const [carrier, file] of Object.entries(config.carriers)) {
    const rules = [...common, ...file.rules.map(compileRule)];
    byCarrier.set(carrier, {
      carrier,
      isReturnLeg: compileReturnLegCodes(file.return_leg_codes),
      // The same (code, text, remarks) triple recurs on most scans of a carrier: decide it once.
      match: memoizeTexts3((rawStatus, rawCode, remarks) => firstMatch(rules, rawStatus!, rawCode, remarks)),
    });
  }

  const reasons = config.ndr.reasons.map((r) => ({ reason: r.reason, stems: compileStems(r.stems) }));
  // Failed-attempt remarks repeat like every carrier text: word-split and match each once.
  const ndrReason = memoizeText((remark: string): NdrReason => {
    const words = wordText(remark);
    for (const { reason, stems } of reasons) if (stems.test(words)) return reason;
    return 'other';
  });
  return {
    mappingVersion,
    forCarrier(carrier) {
      const rules = byCarrier.get(carrier);
      if (!rules) throw new Error(`No mapping rules for carrier "${carrier}"`);
      return rules;
    },
    ndrReason,
  };
}
