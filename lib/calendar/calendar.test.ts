import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, istDayOf, isIstDay, weekdayOf } from '../time/ist-day.ts';
import { DeliveryCalendar, loadCalendar, stateCodeOf } from './index.ts';

const calendar = loadCalendar();

describe('IST days', () => {
  it('takes the IST day of an instant, not the UTC one', () => {
    expect(istDayOf(Date.parse('2026-11-26T19:00:00Z'))).toBe('2026-11-27'); // 00:30 IST
    expect(istDayOf(Date.parse('2026-11-26T18:00:00Z'))).toBe('2026-11-26'); // 23:30 IST
  });
  it('counts and moves whole days, and knows real dates', () => {
    expect(addDays('2026-12-30', 3)).toBe('2027-01-02');
    expect(daysBetween('2026-11-27', '2026-12-02')).toBe(5);
    expect(weekdayOf('2026-11-29')).toBe(0);
    expect(isIstDay('2026-02-29')).toBe(false);
    expect(isIstDay('2028-02-29')).toBe(true);
  });
});

describe('the delivery calendar (config/calendar.yaml + date-holidays IN)', () => {
  it('rests on Sundays unless the carrier delivers on Sundays', () => {
    expect(calendar.isWorkingDay('2026-11-29', { carrier: 'delhivery' })).toBe(false);
    expect(calendar.isWorkingDay('2026-11-29', { carrier: 'ekart' })).toBe(true);
    expect(calendar.isWorkingDay('2026-11-30', { carrier: 'delhivery' })).toBe(true);
  });
  it('knows national holidays from the package and festivals from the config file', () => {
    expect(calendar.holidaysOn('2026-01-26')).toContain('Republic Day');
    expect(calendar.isHoliday('2026-11-08')).toBe(true); // Diwali 2026
    expect(calendar.isWorkingDay('2026-11-09', { carrier: 'ekart' })).toBe(true);
  });
  it('applies a state festival only in its states', () => {
    expect(calendar.isHoliday('2026-10-18', 'West Bengal')).toBe(true); // Durga Puja
    expect(calendar.isHoliday('2026-10-18', 'Karnataka')).toBe(false);
    expect(calendar.isHoliday('2026-05-01', 'MAHARASHTRA')).toBe(true); // Maharashtra Day (date-holidays)
  });
  it('steps over rest days', () => {
    // Saturday 7 Nov 2026, Sunday 8 Nov is Diwali as well: next working day is Monday 9 Nov.
    expect(calendar.nextWorkingDay('2026-11-08', { carrier: 'bluedart' })).toBe('2026-11-09');
    expect(calendar.addWorkingDays('2026-11-07', 1, { carrier: 'bluedart' })).toBe('2026-11-09');
    expect(calendar.workingDaysBetween('2026-11-06', '2026-11-10', { carrier: 'bluedart' })).toBe(3);
  });
  it('reads state names as carriers and directories write them', () => {
    expect(stateCodeOf('Jammu & Kashmir')).toBe('JK');
    expect(stateCodeOf('Chattisgarh')).toBe('CT');
    expect(stateCodeOf('ANDHRA PRADESH')).toBe('AP');
    expect(stateCodeOf('tn')).toBe('TN');
    expect(stateCodeOf('Atlantis')).toBeNull();
  });
  it('works for a state date-holidays has no rules of its own for (national days still apply)', () => {
    const local = new DeliveryCalendar({ sundayDeliveryCarriers: [], festivals: [{ name: 'Karma', states: ['JH'], dates: ['2026-09-02'] }] });
    expect(local.isHoliday('2026-09-02', 'Jharkhand')).toBe(true);
    expect(local.isHoliday('2026-08-15', 'Jharkhand')).toBe(true);
    expect(local.isHoliday('2026-09-02', 'Bihar')).toBe(false);
  });
});
