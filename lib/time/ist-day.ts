/**
 * IST calendar days as `YYYY-MM-DD` strings: the unit of a delivery promise (a carrier's EDD, the
 * prediction's window, a holiday). Pure arithmetic on UTC dates shifted by IST's fixed offset.
 */
import { DAY_MS, IST_OFFSET_MS } from './index.ts';

/** An IST calendar day, `YYYY-MM-DD`. */
export type IstDay = string;

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The IST calendar day an instant falls on. */
export function istDayOf(ms: number): IstDay {
  return new Date(ms + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** Epoch ms of 00:00 IST on `day`. */
export function istDayStartMs(day: IstDay): number {
  return Date.parse(`${day}T00:00:00Z`) - IST_OFFSET_MS;
}

/** True for a real calendar day written `YYYY-MM-DD` (2026-02-30 is not one). */
export function isIstDay(text: string): boolean {
  const m = DAY_PATTERN.exec(text);
  if (!m) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** `day` moved by `n` calendar days (negative moves back). */
export function addDays(day: IstDay, n: number): IstDay {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Whole calendar days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: IstDay, to: IstDay): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(day: IstDay): number {
  return new Date(`${day}T00:00:00Z`).getUTCDay();
}
