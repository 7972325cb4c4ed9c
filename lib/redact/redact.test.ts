import { describe, it, expect } from 'vitest';
import { REDACTED, containsPersonalData, redactNullable, redactText } from './index.ts';

const R = REDACTED;

/** [input, expected] pairs. */
type Case = readonly [string, string];

function check(cases: readonly Case[]): void {
  it.each(cases)('%j', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });
}

describe('numbers cut short by the carrier', () => {
  check([
    // Blue Dart cuts remarks at 40 characters, mid-number.
    ['Delivered to Priya Sharma (+91 98765 432', `Delivered to ${R} (${R}`],
    ['Call +91-9876', `Call ${R}`],
    ['Rate +91 is not a phone', 'Rate +91 is not a phone'],
  ]);
});

describe('names after trigger phrases', () => {
  check([
    ['Delivered to Ramesh Kumar (Self)', `Delivered to ${R} (Self)`],
    ['Shipment delivered. Received by: MR. A K SHARMA', `Shipment delivered. Received by: ${R}`],
    ['RECIEVED BY: SUNITA DEVI', `RECIEVED BY: ${R}`],
    ['RECEIVED BY-RAMESH', `RECEIVED BY-${R}`],
    ['Recd. by Mr Rao', `Recd. by ${R}`],
    ['Handed over to Vikram Singh, mob 9876543210', `Handed over to ${R}, mob ${R}`],
    ['Collected by Anil Yadav on 21-06-2017', `Collected by ${R} on 21-06-2017`],
    ['Receiver Name - Sunita Devi', `Receiver Name - ${R}`],
    ['Reciever name: Ramesh', `Reciever name: ${R}`],
    ['Receiver: Ramesh Kumar Ph: 9876543210', `Receiver: ${R} Ph: ${R}`],
    ['Consignee Name : RAJ KUMAR GUPTA', `Consignee Name : ${R}`],
    ['Signed by Rahul Verma at 13:05', `Signed by ${R} at 13:05`],
    ['Delivered to A.K. Sharma. Thanks', `Delivered to ${R}. Thanks`],
    ['Delivered To Mr.Gupta | OTP verified', `Delivered To ${R} | OTP verified`],
    ["Delivered to Ramesh D'Souza;POD uploaded", `Delivered to ${R};POD uploaded`],
    ['received by ramesh(brother)', `received by ${R}(brother)`],
    ['Delivered to MRS. SUNITA DEVI - WIFE', `Delivered to ${R} - WIFE`],
    ['Delivered to नरेश कुमार', `Delivered to ${R}`],
    ['Recieved by : Suresh S/O Mahesh', `Recieved by : ${R} S/O ${R}`],
    ['Delivered to consignee Ramesh Kumar', `Delivered to consignee ${R}`],
    ['handed over to security guard Ramesh', `handed over to security guard ${R}`],
    ['Delivered to office boy Raju', `Delivered to office boy ${R}`],
    ['Received by Reception (Ms. Anita)', `Received by Reception (${R})`],
    ['Delivered to Neighbour - Mr. Gupta', `Delivered to Neighbour - ${R}`],
    ['Received by Ramesh Relation: Brother', `Received by ${R} Relation: Brother`],
    ['Relation: Suresh Kumar', `Relation: ${R}`],
    ['Name: Ramesh Kumar, Ph: 9876543210', `Name: ${R}, Ph: ${R}`],
    ['Agent: Vikram Singh', `Agent: ${R}`],
    ['Delivery Boy Name: Ramesh', `Delivery Boy Name: ${R}`],
    ['DELIVERED TO SECURITY GUARD NAME RAMESH', `DELIVERED TO SECURITY GUARD NAME ${R}`],
    ['Delivered to Ramesh Kumar thank you', `Delivered to ${R} thank you`],
    ['FE Ramesh 9876543210', `FE ${R}`],
  ]);
});

describe('role words and places are not names', () => {
  check([
    ['Delivered to consignee', 'Delivered to consignee'],
    ['DELIVERED TO CONSIGNEE ON 21-06-2017', 'DELIVERED TO CONSIGNEE ON 21-06-2017'],
    ['delivered to customer', 'delivered to customer'],
    ['Delivered to Customer Successfully', 'Delivered to Customer Successfully'],
    ['handed over to security guard', 'handed over to security guard'],
    ['delivered to neighbour', 'delivered to neighbour'],
    ['delivered to reception', 'delivered to reception'],
    ['Delivered to self', 'Delivered to self'],
    ['RECEIVED BY: SELF', 'RECEIVED BY: SELF'],
    ['Recd by guard', 'Recd by guard'],
    ['delivered to his brother', 'delivered to his brother'],
    ['delivered to the family member', 'delivered to the family member'],
    ["Delivered to consignee's address", "Delivered to consignee's address"],
    ['Delivered to wrong address', 'Delivered to wrong address'],
    ['Delivered to consignee - OTP verified', 'Delivered to consignee - OTP verified'],
    ['Collected by customer from branch', 'Collected by customer from branch'],
    ['Relationship: Self', 'Relationship: Self'],
    ['Relation: Brother in law', 'Relation: Brother in law'],
    ['Handed over to Delhivery hub Amritsar', 'Handed over to Delhivery hub Amritsar'],
    ['Handed over to Ekart Logistics', 'Handed over to Ekart Logistics'],
    ['Shipment handed over to courier partner', 'Shipment handed over to courier partner'],
    ['Shipment Received by Delhivery', 'Shipment Received by Delhivery'],
    ['Picked up by FE', 'Picked up by FE'],
    ['Hub Name: Okhla', 'Hub Name: Okhla'],
    ['Product Name: Nike Shoes', 'Product Name: Nike Shoes'],
    ['Agent will call you before delivery', 'Agent will call you before delivery'],
    ['DELIVERED BACK TO SHIPPER', 'DELIVERED BACK TO SHIPPER'],
  ]);
});

describe('phone numbers', () => {
  check([
    ['Call 9876543210', `Call ${R}`],
    ['Consignee mobile 98765 43210', `Consignee mobile ${R}`],
    ['Mob: 98765-43210', `Mob: ${R}`],
    ['Customer not reachable on +91 9876543210', `Customer not reachable on ${R}`],
    ['Alt no +91-98765-43210 switched off', `Alt no ${R} switched off`],
    ['Contact +919876543210', `Contact ${R}`],
    ['whatsapp 919876543210', `whatsapp ${R}`],
    ['Consignee number 09876543210 busy', `Consignee number ${R} busy`],
    ['Cust no (+91) 98765 43210', `Cust no ${R}`],
    ['Call on +91 987 654 3210 before delivery', `Call on ${R} before delivery`],
    ['Ph: 011-23456789', `Ph: ${R}`],
    ['Tel 080 2345 6789 (office)', `Tel ${R} (office)`],
    ['Mob9876543210', `Mob${R}`],
    ['Ph: 9876543210 / 9123456789', `Ph: ${R} / ${R}`],
    ['Mumbai Andheri East DC Ph 022-26831234', `Mumbai Andheri East DC Ph ${R}`],
    ['Call placed to consignee 9876543210', `Call placed to consignee ${R}`],
  ]);
});

describe('numbers that are not phones', () => {
  check([
    ['AWB 1234567890104 manifested', 'AWB 1234567890104 manifested'],
    ['Waybill 12345670104', 'Waybill 12345670104'],
    ['Order no 9876543210', 'Order no 9876543210'],
    ['Bag 9876543210 added', 'Bag 9876543210 added'],
    ['FMPC9279658213', 'FMPC9279658213'],
    ['City : X   WayNo : ITMI1505876', 'City : X   WayNo : ITMI1505876'],
    ['Booked on 21-06-2017 15:30:25', 'Booked on 21-06-2017 15:30:25'],
    ['2024-09-21T14:31:48.752', '2024-09-21T14:31:48.752'],
    ['strStatusTransOn 21062017 strStatusTransTime 1530', 'strStatusTransOn 21062017 strStatusTransTime 1530'],
    ['Delhi, New Delhi, 110001', 'Delhi, New Delhi, 110001'],
    ['Pieces : 1   Weight : 0.1', 'Pieces : 1   Weight : 0.1'],
    ['Weight 0.5 kg, 1.5 days late', 'Weight 0.5 kg, 1.5 days late'],
    ['For queries contact 1800-209-1234', 'For queries contact 1800-209-1234'],
    ['EE123450104IN Item Booked ', 'EE123450104IN Item Booked '],
  ]);
});

describe('e-mail addresses', () => {
  check([
    ['email priya.s@gmail.com', `email ${R}`],
    ['Mail sent to Ramesh.Kumar+orders@yahoo.co.in for confirmation', `Mail sent to ${R} for confirmation`],
    ['contact: support_team1@shop-xyz.in.', `contact: ${R}.`],
  ]);
});

describe('OTPs and delivery codes', () => {
  check([
    ['OTP 482913', `OTP ${R}`],
    ['OTP: 4829', `OTP: ${R}`],
    ['otp is 1234', `otp is ${R}`],
    ['OTP-123456', `OTP-${R}`],
    ['one time password 5521', `one time password ${R}`],
    ['delivery code 4412', `delivery code ${R}`],
    ['Your OTP is 4821. Do not share', `Your OTP is ${R}. Do not share`],
    ['482913 is your OTP', `${R} is your OTP`],
    ['OTP code mismatch', 'OTP code mismatch'],
    ['OTP verified', 'OTP verified'],
    ['OTP sent to customer', 'OTP sent to customer'],
  ]);
});

describe('GPS coordinates', () => {
  check([
    ['28.6139, 77.2090', R],
    ['Delivered at 28.6139,77.2090', `Delivered at ${R}`],
    ['lat 28.6139 long 77.2090', `lat ${R} long ${R}`],
    ['lat: 28.61393, lng: 77.20902', `lat: ${R}, lng: ${R}`],
    ['geo_location: 12.9716,77.5946', `geo_location: ${R}`],
    ['Lat/Long: 19.0760, 72.8777', `Lat/Long: ${R}`],
    ['Weight : 0.1', 'Weight : 0.1'],
    ['1.5 days', '1.5 days'],
    ['Weight: 0.500, 12.250', 'Weight: 0.500, 12.250'],
  ]);
});

describe('ID numbers', () => {
  check([
    ['Aadhaar 1234 5678 9012', `Aadhaar ${R}`],
    ['ID verified 4321-5678-9012', `ID verified ${R}`],
    ['aadhar no: 234567890123', `aadhar no: ${R}`],
    ['UID 234567890123 checked', `UID ${R} checked`],
    ['ID proof: Aadhaar XXXX XXXX 1234', `ID proof: Aadhaar ${R}`],
    ['PAN ABCPE1234F', `PAN ${R}`],
    ['ID proof no DL-1420110012345', `ID proof no ${R}`],
    ['Driving licence no. MH12 20110012345', `Driving licence no. ${R}`],
    ['Voter ID: ABC1234567', `Voter ID: ${R}`],
    ['Passport No. K1234567', `Passport No. ${R}`],
    ['No Id Proof', 'No Id Proof'],
    ['ID proof collected', 'ID proof collected'],
  ]);
});

describe('labelled street addresses', () => {
  check([
    ['Address: 12, MG Road, Bengaluru 560001', `Address: ${R}`],
    ['Address: 12, M.G. Road, Opp. City Mall, Bengaluru. Door locked', `Address: ${R}. Door locked`],
    ['Delivery address:- Flat No. 4B, Green Park | attempt 2', `Delivery address:- ${R} | attempt 2`],
    ['Address Incorrect', 'Address Incorrect'],
    ['ADDRESS INCOMPLETE, CANNOT DELIVER', 'ADDRESS INCOMPLETE, CANNOT DELIVER'],
    ['Bad/Incomplete Address', 'Bad/Incomplete Address'],
    ['Address Improper - Area', 'Address Improper - Area'],
    ['ADDRESS NOT FOUND', 'ADDRESS NOT FOUND'],
    ['Address: incomplete', 'Address: incomplete'],
  ]);
});

describe('combined remarks', () => {
  check([
    [
      'Out for delivery. Agent Suresh 9876543210, share OTP 4821 with agent',
      `Out for delivery. Agent ${R}, share OTP ${R} with agent`,
    ],
    [
      'Delivered to Priya Sharma, mob +91-98765-43210, email priya.s@gmail.com, loc 28.6139,77.2090',
      `Delivered to ${R}, mob ${R}, email ${R}, loc ${R}`,
    ],
    ['Out for Delivery - Suresh Kumar (98765 43210)', `Out for Delivery - ${R} (${R})`],
    ['Delivery Boy: Ramesh (9876543210)', `Delivery Boy: ${R} (${R})`],
    ['rider Amit +91 98765 43210 will reach by 6 PM', `rider ${R} will reach by 6 PM`],
    ['Received by: Ramesh\nPh: 9876543210', `Received by: ${R}\nPh: ${R}`],
    [
      'Shipment delivered to Mr. Rajesh Gupta on 21-06-2017 at 13:05, OTP 4821 verified',
      `Shipment delivered to ${R} on 21-06-2017 at 13:05, OTP ${R} verified`,
    ],
    [
      'Delivered to Anita (Wife), ID proof: Aadhaar 2345 6789 0123, geo 19.0760,72.8777',
      `Delivered to ${R} (Wife), ID proof: Aadhaar ${R}, geo ${R}`,
    ],
  ]);
});

describe('carrier texts that carry no personal data stay byte-identical', () => {
  const clean = [
    'In Transit',
    'Shipment picked up',
    'Added to Bag',
    'Bag Received at Facility',
    'Out for delivery',
    'Call placed to consignee',
    'Consignee Unavailable',
    'CONSIGNEE NOT AVAILABLE;CANT DELIVER',
    'Shipment attempted - Customer not available',
    'PARTY NOT AVAILABLE',
    'Addressee Absent',
    'Customer Refused to accept/Order Cancelled',
    'RESIDENCE/OFFICE CLOSED;CANT DELIVER',
    'Payment not ready with customer',
    'Not attempted',
    'Shipment Recieved at Origin Center',
    'SHIPMENT OUTSCANNED TO NETWORK',
    'Amritsar_VerkaBypss_I (Punjab)',
    'Activity : Despatched to Tiruvannamalai - MTP',
    'outfordelivery: Out for Delivery - Area',
    'Item BookItem Book At Dhule Jaihind Colony S.O',
    'Item Bagged ',
    'Mumbai, Andheri East, 400069',
    'Reached At Destination',
  ];
  it.each(clean)('%j', (text) => {
    expect(redactText(text)).toBe(text);
    expect(containsPersonalData(text)).toBe(false);
  });
});

describe('API', () => {
  it('exports the marker', () => {
    expect(REDACTED).toBe('[redacted]');
  });

  it('passes null, undefined and empty strings through', () => {
    expect(redactNullable(null)).toBeNull();
    expect(redactNullable('OTP 4821')).toBe(`OTP ${R}`);
    expect(redactText('')).toBe('');
    expect(redactText(undefined as unknown as string)).toBeUndefined();
    expect(redactText(null as unknown as string)).toBeNull();
    expect(containsPersonalData(null as unknown as string)).toBe(false);
  });

  it('reports whether a text holds personal data', () => {
    expect(containsPersonalData('Delivered to Ramesh Kumar (Self)')).toBe(true);
    expect(containsPersonalData('Delivered to consignee')).toBe(false);
    expect(containsPersonalData('call 9876543210')).toBe(true);
  });

  it('is idempotent', () => {
    const texts = [
      'Out for delivery. Agent Suresh 9876543210, share OTP 4821 with agent',
      'Delivered to Priya Sharma, mob +91-98765-43210, email priya.s@gmail.com, loc 28.6139,77.2090',
      'Shipment delivered. Received by: MR. A K SHARMA',
      'Address: 12, MG Road, Bengaluru 560001',
    ];
    for (const t of texts) {
      const once = redactText(t);
      expect(redactText(once)).toBe(once);
      expect(containsPersonalData(once)).toBe(false);
    }
  });

  it('collapses adjacent markers and leaves no split phone number', () => {
    expect(redactText('OFD: SURESH KUMAR-9876543210')).toBe(`OFD: ${R}`);
    expect(redactText('+91-98765-43210')).toBe(R);
    expect(redactText('Agent Suresh 98765 43210')).toBe(`Agent ${R}`);
  });

  it('keeps no shared regex state between calls', () => {
    for (let i = 0; i < 3; i++) {
      expect(redactText('Call 9876543210 or 9123456789')).toBe(`Call ${R} or ${R}`);
      expect(redactText('Delivered to Ramesh, then Delivered to Suresh')).toBe(
        `Delivered to ${R}, then Delivered to ${R}`,
      );
    }
  });
});

describe('delivery staff after a route or employee code (issue 13)', () => {
  check([
    // Real Xpressbees text relayed by Shiprocket (../shared/spec/real-bodies/shiprocket).
    [
      'Out for Delivery Out for delivery: 383439-Nandinayani Reddy Bhaskara Sitics Logistics  (356231) (383439)-PDS22200085719383439-FromMob , MobileNo:- 9963133564',
      `Out for Delivery Out for delivery: 383439-${R}  (356231) (383439)-PDS22200085719383439-FromMob , MobileNo:- ${R}`,
    ],
    ['DLV123-Suresh Kumar-Mob 9876543210', `DLV123-${R}-Mob ${R}`],
    ['EMP 4521 - R. Srinivasan - Ph: 9876501234', `EMP 4521 - ${R} - Ph: ${R}`],
    ['Out for delivery - PNQ-112 - Santosh Jadhav - 9890011122', `Out for delivery - PNQ-112 - ${R}`],
    // After a staff trigger the trigger reader also takes the code's letters for a name: more than
    // needed, never less.
    ['Delivery Boy: LKO-DB-77 - Rakesh Yadav - 9415012345', `Delivery Boy: ${R}-77 - ${R}`],
    ['Runsheet DRS-4471 - Imran Shaikh, mobile no 98200 11122', `Runsheet DRS-4471 - ${R}, mobile no ${R}`],
  ]);

  // A code and a hyphen alone make no person: without a phone field the words stay.
  check([
    ['Bag BLR-0042 - Hebbal Hub', 'Bag BLR-0042 - Hebbal Hub'],
    ['Manifest 7781 - Pune Gateway', 'Manifest 7781 - Pune Gateway'],
    ['Route 12 - Out for delivery', 'Route 12 - Out for delivery'],
    ['Trip 5531 - Delayed due to rain, call 1800 209 6161', 'Trip 5531 - Delayed due to rain, call 1800 209 6161'],
  ]);
});
