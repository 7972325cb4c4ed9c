/**
 * Precompiled patterns and word lists for personal-data removal, built once at module load; nothing
 * is compiled per call. The patterns are global (`g`) or sticky (`y`); every user sets `lastIndex`
 * before running one and runs them synchronously, so sharing them between calls is safe.
 */

export const REDACTED = '[redacted]';

// ---------------------------------------------------------------- GPS coordinates
/** "lat 28.6139", "lat: 28.61393", "lng: 77.20902", "longitude=77.2" → label kept. */
export const GPS_LABELLED_SINGLE =
  /\b(lat(?:itude)?|lng|lon(?:g(?:itude)?)?)(\s*[:=-]?\s*)-?\d{1,3}\.\d+(?![\d.])/gi;
/** "geo_location: 12.9716,77.5946", "loc 28.61, 77.20", "gps: 28.6/77.2" → label kept. */
export const GPS_LABELLED_PAIR = new RegExp([
  String.raw`\b((?:geo[\s_-]*loc(?:ation)?|geo[\s_-]*coord(?:inate)?s?|geo|gps|loc|location|coords?|coordinates|lat[\s_/-]*l(?:o)?ng|latlng|`,
  String.raw`latlong)\s*[:=-]?\s*)\(?-?\d{1,3}\.\d+\s*[,/ ]\s*-?\d{1,3}\.\d+\)?(?![\d.])`,
].join(''), 'gi');
/**
 * Bare pair without a label: "28.6139, 77.2090", "28.6139,77.2090", at least 3 decimals each. The
 * caller keeps only pairs inside India's bounding box (lat 6-37, long 68-97), so
 * "Weight: 0.500, 12.250" stays.
 */
export const GPS_BARE_PAIR = /\d(?<![\d.]\d)\d?\.\d{3,}\s*,\s*\d{2}\.\d{3,}(?![\d.])/g;

// ---------------------------------------------------------------- ID numbers
/** Aadhaar written 4-4-4 with the same separator (space or dash) between the groups. */
export const AADHAAR_GROUPED = /\d(?<![\d-]\d)\d{3}([ -])\d{4}\1\d{4}(?![\d-])/g;
/** Any 12 digits (optionally grouped, masked "XXXX XXXX 1234" too) after an Aadhaar/UID label. */
export const AADHAAR_LABELLED =
  /\b((?:aadhaa?r|aadhar|adhaa?r|uid(?:ai)?)(?:\s*(?:card|no\.?|number|num|#))*\s*(?:[:=-]+|\bis\b)?\s*)[\dxX*]{4}[ -]?[\dxX*]{4}[ -]?\d{4}(?!\d)/gi;
/** PAN: 5 letters (4th = holder type), 4 digits, 1 letter. */
export const PAN = /\b[A-Z]{3}[ABCFGHJLPT][A-Z]\d{4}[A-Z]\b/gi;
/**
 * Labelled identity documents: "ID proof no DL-1420110012345", "Voter ID: ABC1234567",
 * "Passport No. K1234567". The value must contain a digit (checked in the replacer), so
 * "No Id Proof" / "ID proof collected" are left alone.
 */
export const ID_LABELLED = new RegExp([
  String.raw`\b((?:id[\s_-]*proof|id[\s_-]*card|identity[\s_-]*(?:proof|card)|photo[\s_-]*id|govt\.?[\s_-]*id|voter[\s_-]*id(?:[\s_-]*card)?|epic|`,
  String.raw`driving[\s_-]*licen[cs]e|dl[\s_-]*no|passport|pan[\s_-]*card|pan[\s_-]*no|ration[\s_-]*card|`,
  String.raw`kyc)(?:\s*(?:no|num|number|#)(?![a-z]))?\.?(?:\s*(?:[:=#-]+|\bis\b))?\s*)([A-Za-z0-9][A-Za-z0-9/-]*(?: \d[A-Za-z0-9/-]*)*)`,
].join(''), 'gi');

// ---------------------------------------------------------------- OTP / delivery codes
/** "OTP 482913", "OTP: 4829", "otp is 1234", "OTP-123456", "one time password 5521",
 * "delivery code 4412" → label kept, digits replaced. "OTP code mismatch" has no digits. */
export const OTP_LABELLED = new RegExp([
  String.raw`\b(otp|one[\s-]*time[\s-]*pass(?:word|code)|delivery[\s-]*(?:code|otp|pin)|verification[\s-]*code|secure[\s-]*code|security[\s-]*code|`,
  String.raw`secret[\s-]*code|happy[\s-]*code)((?:\s*(?:code|no\.?|number|pin)(?![a-z]))?(?:\s*(?:[:=#-]|\(|\bis\b|\bwas\b))*\s*)\d{4,8}(?!\d)`,
].join(''), 'gi');
/** "482913 is your OTP" */
export const OTP_TRAILING =
  /\d(?<![\d.]\d)\d{3,7}(\s+is\s+(?:your|the)\s+(?:otp|one[\s-]*time[\s-]*password|delivery[\s-]*code))/gi;

// ---------------------------------------------------------------- phone numbers
/**
 * Labelled phone numbers of any shape (landlines with STD code, odd groupings, glued labels):
 * "Ph: 011-23456789", "Tel 080 2345 6789", "Mob9876543210", "contact no. +91 98765 43210".
 * The number part is greedy; the replacer keeps only the first 8-13 digits' worth.
 */
export const PHONE_LABELLED = new RegExp([
  String.raw`\b((?:alt(?:ernate|ernative)?\.?\s*)?(?:phone|ph|tel(?:ephone)?|mob(?:ile)?|cell(?:phone)?|contact|landline|whats\s?app|`,
  String.raw`call(?:\s+(?:on|at))?)(?![a-z])(?:\s*(?:no|nos|num|number)(?![a-z]))?\.?\s*(?:[:#=-]+)?[ \t]*)((?:\+\s*|\(\s*\+?)?\d[\d \t()-]*\d)`,
].join(''), 'gi');
/**
 * Indian mobile numbers: 10 digits starting 6-9, optionally prefixed by +91 / (+91) / 0091 / 91 / 0,
 * written contiguous or grouped 5-5, 3-3-4 or 4-3-3 with single spaces or dashes.
 * Must not be preceded by a letter or digit (so "FMPC9279658213" and 13-digit consignment numbers
 * stay): checked by the caller, a leading lookbehind makes V8 test every position.
 */
export const MOBILE =
  /(?:(?:\(\s*\+?\s*91\s*\)|\+\s*91|00\s*91|91|0)[ \t]*-?[ \t]*)?[6-9](?:\d{9}|\d{4}[ -]\d{5}|\d{2}[ -]\d{3}[ -]\d{4}|\d{3}[ -]\d{3}[ -]\d{3})(?!\d)/g;
/**
 * A +91 number cut short at the end of a text: carriers truncate remarks (Blue Dart at 40
 * characters), so "…(+91 98765 432" must still go. "+91" is never anything but a phone prefix.
 */
export const MOBILE_CUT_AT_END = /(?:\(\s*\+\s*91\s*\)|\+\s*91)[ \t-]*\d[\d \t-]*$/;
/** A consignment/reference label right before a bare digit run: then the digits are not a phone. */
export const REFERENCE_LABEL_BEFORE = new RegExp([
  String.raw`(?:awb|waybill|way\s*bill|docket|cn|c\/n|cnno|consignment|tracking|track|order|ref|reference|invoice|shipment|lr|manifest|bag|seal|article|trip|`,
  String.raw`runsheet|drs)\s*(?:no|num|number|id|#)?\.?\s*[:#=-]?\s*$`,
].join(''), 'i');
export const TOLL_FREE = /^(?:1800|1860)/;

// ---------------------------------------------------------------- labelled street address
/**
 * "Address: 12, MG Road, Bengaluru" → "Address: [redacted]". Needs an explicit ':' / '=' label
 * ("Address Incorrect", "Address Improper - Area" have none). The value runs to the end of the
 * sentence/field: '. ' / end, '|', ';' or a line break; "No." / "Opp." / single-letter initials
 * ("M.G. Road") do not end it.
 */
export const ADDRESS_LABELLED = new RegExp([
  String.raw`\b((?:(?:delivery|consignee|customer|receiver|recipient|shipping|billing|pickup|residential|home|office|full|complete|current|`,
  String.raw`new)[\s_-]+)?(?:address|addr|add)\.?[ \t]*(?::-?|=|-:)[ \t]*)((?:\b(?:[a-z]|no|nr|opp|st|rd|flat|plot|sec|hno|bldg|apt|near|ext)\.[ \t]*|`,
  String.raw`[^.|;\n\r]|\.(?=\S))+)`,
].join(''), 'gi');
/** Values after an address label that are failure reasons, not addresses. */
export const ADDRESS_NDR_VALUE = new RegExp([
  String.raw`^(?:not|no|wrong|bad|incorrect|incomplete|improper|insufficient|invalid|in[\s-]?complete|in[\s-]?correct|un[a-z]*|issue|problem|mismatch|`,
  String.raw`change[sd]?|correction|verified|confirmed|n\/?a|nil|none|missing|same|ok|short|partial|given|provided)\b`,
].join(''), 'i');

// ---------------------------------------------------------------- names
/**
 * Name triggers. Group 1: phrases that are always followed by a person ("received by", "delivered
 * to"). Group 2: labels that need an explicit separator ("Receiver: …", "Relation - …"). Group 3:
 * delivery staff ("Agent Suresh 98…"), redacted only with a separator or a phone after the name.
 */
export const NAME_TRIGGER = new RegExp([
  String.raw`\b(?:(re(?:ce|ci)ved\s+by|[sdwc]\/o|rec(?:ie|ei)?ved\s+by|rcvd\.?\s+by|recd\.?\s+by|rec'd\s+by|delivered\s+to|dlvd\.?\s+to|handed\s*over\s+to|`,
  String.raw`handover\s+to|hand\s+over\s+to|collected\s+by|picked\s*up\s+by|signed\s+(?:for\s+)?by|`,
  String.raw`(?:rec(?:ei|ie)ver|recipient|consignee|customer|contact\s+person|agent|rider|executive)'?s?\s+name)|`,
  String.raw`(rec(?:ei|ie)ver|recipient|consignee|relation(?:ship)?|name)(?=[ \t]*[:=#-])|`,
  String.raw`((?:delivery|field|last[\s-]*mile)\s+(?:agent|boy|executive|associate|partner|staff|person)|courier\s+boy|agent|rider|fe))\b`,
].join(''), 'gi');
/** What may follow a staff name for it to count as one: a phone (already redacted or not). */
export const STAFF_FOLLOWED_BY_PHONE =
  /[ \t]*[(:,-]?[ \t]*(?:\[redacted\]|\+?\d|(?:mob|mobile|ph|phone|contact|call|tel|cell)(?![a-z]))/iy;

/** Collapses "[redacted] [redacted]" / "[redacted]-[redacted]" into one marker. */
export const ADJACENT_REDACTIONS = /\[redacted\](?:[ \t]*-?[ \t]*\[redacted\])+/g;

const words = (s: string): ReadonlySet<string> => new Set(s.trim().split(/\s+/));

/** Titles that belong to the name ("MR. A K SHARMA"); a '.' after them does not end the name. */
export const HONORIFICS = words(`
  mr mrs ms miss mister dr smt shri sri shree shrimati kumari km kum md mohd sh prof capt col er adv
`);

/** Leading filler before a role ("delivered to the customer", "to his brother"). */
export const FILLERS = words(`the his her their our your my an`);

/**
 * People described by their role, not their name. Skipped before a name ("neighbour Mr Gupta"),
 * ending it after one ("Ramesh brother"); a slot made only of these is left as it is.
 */
export const ROLES = words(`
  consignee consignees customer customers client buyer self security securities guard guards
  neighbour neighbor neighbours neighbors reception receptionist front desk family member members
  addressee recipient receiver reciever shipper sender seller vendor merchant watchman watchmen gatekeeper
  doorman concierge caretaker relative relatives brother sister father mother son daughter wife
  husband spouse uncle aunt aunty auntie cousin nephew niece grandfather grandmother grandson
  granddaughter grandparent parent parents friend colleague tenant landlord owner houseowner
  employee staff manager admin maid servant driver peon helper boy girl authorized authorised
  representative rep signatory incharge in-charge supervisor clerk accountant secretary partner
  hr team dept department housekeeping mailroom storekeeper shopkeeper bhai bhaiya didi bhabhi
  mom dad papa mummy mama beta behen son-in-law daughter-in-law brother-in-law sister-in-law
  father-in-law mother-in-law co-worker coworker flatmate roommate person individual attendant
  lady gentleman sir madam maam ma'am officer official agent agents rider executive associate fe
`);

/** Places and organisations: if one appears in the slot, it is not a person — leave it all. */
export const PLACES = words(`
  hub facility branch center centre warehouse gateway dc depot origin destination airport airline
  flight vehicle truck train bag coloader co-loader network carrier courier logistics express
  delhivery bluedart dtdc xpressbees shadowfax ekart ecom shiprocket maruti professional
  indiapost india post speedpost postoffice po ho bo counter rto lm fm 3pl locker store shop
  mall society apartment building premises station office amazon flipkart myntra meesho ajio
  nykaa dunzo porter warehousing fulfilment fulfillment processing sorting service pickup
  point franchise agency ltd limited pvt private company services solutions line haul linehaul
  transporter forwarding forwarder air airlines surface mode connection bagging sorter godown
`);

/**
 * Words that end a name (or, at the start, mean there is none): prepositions, verbs, status and
 * contact vocabulary ("Delivered to Ramesh at gate", "Agent will call", "delivered to wrong address").
 */
export const STOPWORDS = words(`
  at on via otp mob mobile mobno ph phone tel contact cell call calling called email mail e-mail
  from in into inside outside with without and or near nearby for by who whose which that this
  is are was were be been being has have had will would shall should can could may might must
  not no after before as of to successfully successful safely personally directly today
  yesterday tomorrow am pm hrs hours time date sign signed signature pod relation relationship
  id proof code verified mismatch but also again please pls plz kindly unavailable available
  absent refused closed locked attempt attempted attempting delivered delivering delivery
  deliver shipment shipments package packages parcel parcels item items order orders
  consignment cod cash amount payment paid collected received handed over out up wrong
  incorrect incomplete same other another any none nobody someone somebody due because since
  while till until upto reason remark remarks status thru through address location area city
  pincode pin landmark door doorstep gate home house residence floor flat premise premises
  reached arrived arriving assigned allotted out-for-delivery ofd will not visit visited
  reach reaching dispatched despatched shipped successfully confirmed confirmation verification
  name number details detail info information ok okay yes done
  mins minutes morning evening afternoon night lat long lng lon latitude longitude loc geo gps
  aadhaar aadhar adhaar adhar uid pan kyc voter passport licence license dl transit scan scanned
  reachable unreachable responding answering switched off busy whatsapp sms message msg
  thank thanks thankyou regards
`);
