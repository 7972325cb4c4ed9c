/**
 * The delivery calendar: which IST days a carrier picks up and delivers in a state. Sundays rest
 * unless the carrier's last mile works them; national and state public holidays (date-holidays,
 * country IN, through holiday-table.ts) and the festival days of config/calendar.yaml rest for every carrier.
 * Pure once built: answers are memoised per state and day, since the network model and the
 * prediction ask the same few hundred days millions of times.
 */
import { addDays, weekdayOf, type IstDay } from '../time/ist-day.ts';
import { publicHolidays } from './holiday-table.ts';
import { stateCodeOf } from './states.ts';

export interface Festival {
  name: string;
  /** `all`, or state codes. */
  states: 'all' | readonly string[];
  dates: readonly IstDay[];
}

export interface CalendarConfig {
  sundayDeliveryCarriers: readonly string[];
  festivals: readonly Festival[];
}

/** Who asks: the carrier (its Sunday rule) and the state whose holidays apply (null: national only). */
export interface DayContext {
  carrier?: string | null;
  /** A state name or code, as a record or the pincode directory writes it. */
  state?: string | null;
}

const NATIONAL = '';

export class DeliveryCalendar {
  /** state code ('' national) → holiday day → names. */
  private readonly holidayNames = new Map<string, Map<IstDay, string[]>>();
  private readonly yearsLoaded = new Map<string, Set<number>>();
  private readonly sundayCarriers: ReadonlySet<string>;

  private readonly config: CalendarConfig;
  constructor(config: CalendarConfig) {
    this.config = config;
    this.sundayCarriers = new Set(config.sundayDeliveryCarriers);
  }

  /** True when the carrier's last mile works on Sundays. */
  deliversOnSunday(carrier: string | null | undefined): boolean {
    return carrier ? this.sundayCarriers.has(carrier) : false;
  }

  /** Names of the holidays on `day` in the state (national ones included); empty on a normal day. */
  holidaysOn(day: IstDay, state?: string | null): readonly string[] {
    const code = stateCodeOf(state) ?? NATIONAL;
    return this.holidaysOf(code, Number(day.slice(0, 4))).get(day) ?? [];
  }

  isHoliday(day: IstDay, state?: string | null): boolean {
    return this.holidaysOn(day, state).length > 0;
  }

  /** A day the carrier picks up and delivers in the state. */
  isWorkingDay(day: IstDay, context: DayContext = {}): boolean {
    if (weekdayOf(day) === 0 && !this.deliversOnSunday(context.carrier)) return false;
    return !this.isHoliday(day, context.state);
  }

  /** `day` itself when it is a working day, else the first working day after it. */
  nextWorkingDay(day: IstDay, context: DayContext = {}): IstDay {
    let current = day;
    // A run of rest days is short (a Sunday next to a festival), but the bound keeps a bad config finite.
    for (let i = 0; i < 30 && !this.isWorkingDay(current, context); i++) current = addDays(current, 1);
    return current;
  }

  /** The `n`-th working day after `day` (n = 0: `nextWorkingDay(day)`). */
  addWorkingDays(day: IstDay, n: number, context: DayContext = {}): IstDay {
    let current = this.nextWorkingDay(day, context);
    for (let i = 0; i < n; i++) current = this.nextWorkingDay(addDays(current, 1), context);
    return current;
  }

  /** Working days in (from, to]: how many delivery days a shipment gets between two days. */
  workingDaysBetween(from: IstDay, to: IstDay, context: DayContext = {}): number {
    let count = 0;
    for (let day = addDays(from, 1); day <= to; day = addDays(day, 1)) if (this.isWorkingDay(day, context)) count++;
    return count;
  }

  private holidaysOf(code: string, year: number): Map<IstDay, string[]> {
    let byDay = this.holidayNames.get(code);
    let years = this.yearsLoaded.get(code);
    if (!byDay || !years) {
      byDay = new Map();
      years = new Set();
      this.holidayNames.set(code, byDay);
      this.yearsLoaded.set(code, years);
    }
    if (!years.has(year)) {
      years.add(year);
      this.addYear(byDay, code, year);
    }
    return byDay;
  }

  private addYear(byDay: Map<IstDay, string[]>, code: string, year: number): void {
    const add = (day: IstDay, name: string) => {
      const names = byDay.get(day);
      if (!names) byDay.set(day, [name]);
      else if (!names.includes(name)) names.push(name);
    };
    for (const [day, name] of publicHolidays(code, year)) add(day, name);
    for (const festival of this.config.festivals) {
      if (festival.states !== 'all' && (code === NATIONAL || !festival.states.includes(code))) continue;
      for (const day of festival.dates) if (Number(day.slice(0, 4)) === year) add(day, festival.name);
    }
  }
}
