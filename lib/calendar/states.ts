/**
 * Indian states and union territories by the two-letter codes of `date-holidays` (ISO 3166-2:IN
 * without the prefix), and the spellings carriers and the pincode directories write them in.
 */

const CODES: Readonly<Record<string, string>> = {
  AN: 'Andaman and Nicobar Islands', AP: 'Andhra Pradesh', AR: 'Arunachal Pradesh', AS: 'Assam', BR: 'Bihar',
  CH: 'Chandigarh', CT: 'Chhattisgarh', DD: 'Daman and Diu', DL: 'Delhi', DN: 'Dadra and Nagar Haveli', GA: 'Goa',
  GJ: 'Gujarat', HP: 'Himachal Pradesh', HR: 'Haryana', JH: 'Jharkhand', JK: 'Jammu and Kashmir', KA: 'Karnataka',
  KL: 'Kerala', LA: 'Ladakh', LD: 'Lakshadweep', MH: 'Maharashtra', ML: 'Meghalaya', MN: 'Manipur',
  MP: 'Madhya Pradesh', MZ: 'Mizoram', NL: 'Nagaland', OR: 'Odisha', PB: 'Punjab', PY: 'Puducherry', RJ: 'Rajasthan',
  SK: 'Sikkim', TG: 'Telangana', TN: 'Tamil Nadu', TR: 'Tripura', UP: 'Uttar Pradesh', UT: 'Uttarakhand',
  WB: 'West Bengal',
};

/** Other spellings seen in pincode directories and carrier feeds, already in `squash` form. */
const ALIASES: Readonly<Record<string, string>> = {
  andamannicobar: 'AN', andamanandnicobar: 'AN', chattisgarh: 'CT', chhatisgarh: 'CT', orissa: 'OR',
  pondicherry: 'PY', uttaranchal: 'UT', newdelhi: 'DL', nctofdelhi: 'DL', damandiu: 'DD',
  dadranagarhaveli: 'DN', dadraandnagarhavelianddamananddiu: 'DN', jammukashmir: 'JK',
};

/** Lower case letters only, `&` read as "and": "Jammu & Kashmir" → "jammuandkashmir". */
function squash(name: string): string {
  return name.toLowerCase().replaceAll('&', 'and').replace(/[^a-z]/g, '');
}

const BY_NAME = new Map<string, string>([
  ...Object.entries(CODES).map(([code, name]) => [squash(name), code] as [string, string]),
  ...Object.entries(ALIASES),
]);

/** The two-letter code of a state written any common way (a code itself too), or null. */
export function stateCodeOf(nameOrCode: string | null | undefined): string | null {
  if (!nameOrCode) return null;
  const trimmed = nameOrCode.trim();
  if (/^[A-Za-z]{2}$/.test(trimmed) && CODES[trimmed.toUpperCase()]) return trimmed.toUpperCase();
  return BY_NAME.get(squash(trimmed)) ?? null;
}

/** The state's name as this product writes it. */
export function stateNameOf(code: string): string | null {
  return CODES[code] ?? null;
}

export const STATE_CODES: readonly string[] = Object.keys(CODES);
