/** Calendar and clock checks for the IST wall times carriers write without an offset. */

const pad2 = (n: number) => String(n).padStart(2, '0');

/** True when the fields name a real calendar day (month 1-12) and a real clock time. */
export function isRealDateTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  return hour <= 23 && minute <= 59 && second <= 59;
}

/** `YYYY-MM-DDTHH:MM:SS` when the fields form a real date and time, else null. */
export function wallTime(year: number, month: number, day: number, hour: number, minute: number, second: number): string | null {
  if (!isRealDateTime(year, month, day, hour, minute, second)) return null;
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}`;
}

/** The last second of a wall time's day: a promised date without a time means "by the end of that day". */
export function endOfDay(time: string): string {
  return `${time.slice(0, 10)}T23:59:59`;
}

/** The years accepted from the carriers whose time formats are unconfirmed (ekart, shadowfax, professionalcouriers). */
export function isPlausibleYear(year: number): boolean {
  return year >= 1970 && year <= 2999;
}
