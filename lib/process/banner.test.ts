import { describe, expect, it } from 'vitest';
import { formatBanner, redactUrl } from './banner.ts';

describe('redactUrl', () => {
  it('hides user names, passwords and secret query values; leaves the rest', () => {
    expect(redactUrl('redis://:hunter2@10.0.0.1:6379/0')).toBe('redis://:***@10.0.0.1:6379/0');
    expect(redactUrl('http://analyst:s3cret@ch.example.com:8123')).toBe('http://***:***@ch.example.com:8123');
    expect(redactUrl('http://ch:8123/?password=x&database=tracking')).toBe('http://ch:8123/?password=***&database=tracking');
    expect(redactUrl('127.0.0.1:9092,kafka-2:9092')).toBe('127.0.0.1:9092,kafka-2:9092');
    expect(redactUrl('redis+cluster://u:p@a:7000,b:7001')).toBe('redis+cluster://***:***@a:7000,b:7001');
    expect(redactUrl('not a url with secret')).toBe('***');
  });
});

describe('formatBanner', () => {
  it('aligns the labels and indents the next steps', () => {
    expect(formatBanner({ title: 'App', lines: [['a', '1'], ['long', '2']], next: ['do this'] })).toBe('\nApp\n  a:    1\n  long: 2\n\n  do this\n\n');
  });
});
