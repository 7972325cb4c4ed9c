export { DeliveryCalendar, type CalendarConfig, type DayContext, type Festival } from './calendar.ts';
export { CalendarFileSchema, loadCalendar } from './load.ts';
export { STATE_CODES, stateCodeOf, stateNameOf } from './states.ts';
