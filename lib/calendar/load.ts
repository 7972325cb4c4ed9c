/** Reads config/calendar.yaml (validated with zod) into the product's one DeliveryCalendar. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, validateConfig } from '../config/load.ts';
import { DEFAULT_CONFIG_DIR } from '../config/schemas.ts';
import { isIstDay } from '../time/ist-day.ts';
import { DeliveryCalendar } from './calendar.ts';
import { STATE_CODES } from './states.ts';

const Day = z.string().refine(isIstDay, 'a calendar day written YYYY-MM-DD');
const StateCode = z.string().refine((code) => STATE_CODES.includes(code), 'a two-letter state code of date-holidays (e.g. MH, WB, TN)');

export const CalendarFileSchema = z.object({
  sunday_delivery_carriers: z.array(z.string().min(1)).default([]),
  festivals: z.array(z.object({
    name: z.string().min(1),
    states: z.union([z.literal('all'), z.array(StateCode).min(1)]),
    // YAML reads an unquoted 2026-11-08 as a date: take it back to its text.
    dates: z.array(z.preprocess((value) => (value instanceof Date ? value.toISOString().slice(0, 10) : value), Day)).min(1),
  })),
});

const loaded = new Map<string, DeliveryCalendar>();

/** The calendar of `configDir` (memoised: it is read once per process). */
export function loadCalendar(configDir: string = DEFAULT_CONFIG_DIR): DeliveryCalendar {
  const cached = loaded.get(configDir);
  if (cached) return cached;
  const path = join(configDir, 'calendar.yaml');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(err as Error).message}`);
  }
  const file = validateConfig(CalendarFileSchema, parseYaml(text), path);
  const calendar = new DeliveryCalendar({ sundayDeliveryCarriers: file.sunday_delivery_carriers, festivals: file.festivals });
  loaded.set(configDir, calendar);
  return calendar;
}
