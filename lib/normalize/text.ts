import { memoizeText } from './memo.ts';

/**
 * Text folding for rule matching. Carriers write the same scan many ways ("Despatched",
 * "DISPATCHED ", "Out-For-Delivery", "outfordelivery"), so both rule patterns and scan texts are
 * folded the same way before comparison.
 */

// Spelling variants seen in carrier feeds, folded to one spelling (applied after stripping).
const SPELLING_VARIANTS: [RegExp, string][] = [
  [/despatch/g, 'dispatch'],
  [/recieve/g, 'receive'],
  [/delievere?d/g, 'delivered'],
  [/deliverd/g, 'delivered'],
  [/cancell/g, 'cancel'],
  [/adress/g, 'address'],
  [/availabe/g, 'available'],
  [/availble/g, 'available'],
];

const NON_ALPHANUMERIC = /[^a-z0-9]+/g;

function foldText(text: string): string {
  let key = text.toLowerCase().replace(NON_ALPHANUMERIC, '');
  for (const [pattern, replacement] of SPELLING_VARIANTS) {
    if (pattern.test(key)) key = key.replace(pattern, replacement);
    pattern.lastIndex = 0;
  }
  return key;
}

/** Lowercase, spaces and punctuation removed, spelling variants folded: "Item Despatched " → "itemdispatched". */
export const matchKey = memoizeText(foldText);

/** Lowercase words separated by single spaces, for word-stem matching of remarks. */
export function wordText(text: string): string {
  let words = ` ${text.toLowerCase().replace(NON_ALPHANUMERIC, ' ')} `;
  words = words.replace(/ recie/g, ' recei').replace(/ adress/g, ' address').replace(/ availble/g, ' available');
  return words.replace(/ +/g, ' ');
}

/** Trims and collapses runs of white space (carriers pad labels: "Item Booked  "). */
export const cleanText = memoizeText((text: string) => text.replace(/\s+/g, ' ').trim());
