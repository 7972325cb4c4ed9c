/**
 * Units of time and India Standard Time's offset: the one place they are written (eslint.config.js
 * refuses HOUR_MS-like or IST offset declarations elsewhere). Pure constants.
 */
export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const DAY_S = DAY_MS / SECOND_MS;

/** India Standard Time: UTC+05:30 all year, no daylight saving (decisions.md "Time"). */
export const IST_OFFSET = '+05:30';
export const IST_OFFSET_MS = 330 * MINUTE_MS;
