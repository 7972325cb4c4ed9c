import { describe, expect, it } from 'vitest';
import { fromAcceptLanguage, pageLanguage } from './language.ts';

describe('pageLanguage', () => {
  it('takes ?lang= first, when the page has that language', () => {
    expect(pageLanguage({ query: 'ta', watchLanguage: 'hi', acceptLanguage: 'bn' })).toBe('ta');
    expect(pageLanguage({ query: 'hi-IN' })).toBe('hi');
    expect(pageLanguage({ query: 'BN' })).toBe('bn');
  });

  it('passes over a ?lang= it has no catalogue for, to the watch\'s language', () => {
    expect(pageLanguage({ query: 'mr', watchLanguage: 'hi', acceptLanguage: 'ta' })).toBe('hi');
    expect(pageLanguage({ query: '', watchLanguage: 'bn' })).toBe('bn');
  });

  it('then the Accept-Language header, then English', () => {
    expect(pageLanguage({ watchLanguage: 'te', acceptLanguage: 'ta-IN,ta;q=0.9,en;q=0.8' })).toBe('ta');
    expect(pageLanguage({ watchLanguage: null, acceptLanguage: 'fr-FR, de;q=0.5' })).toBe('en');
    expect(pageLanguage({})).toBe('en');
  });
});

describe('fromAcceptLanguage', () => {
  it('maps regional tags to the language: hi-IN is Hindi', () => {
    expect(fromAcceptLanguage('hi-IN')).toBe('hi');
    expect(fromAcceptLanguage('bn-BD')).toBe('bn');
  });

  it('orders by q, not by position', () => {
    expect(fromAcceptLanguage('en;q=0.3, hi;q=0.9, ta;q=0.5')).toBe('hi');
    expect(fromAcceptLanguage('en-GB;q=0.8, bn')).toBe('bn');
  });

  it('keeps the header\'s order between equal q values', () => {
    expect(fromAcceptLanguage('ta;q=0.7, hi;q=0.7')).toBe('ta');
  });

  it('skips languages it lacks and q=0 ("not this one")', () => {
    expect(fromAcceptLanguage('mr-IN, te;q=0.9, hi;q=0.4')).toBe('hi');
    expect(fromAcceptLanguage('hi;q=0, en;q=0.1')).toBe('en');
  });

  it('finds nothing in an empty, wildcard or malformed header', () => {
    expect(fromAcceptLanguage('')).toBeNull();
    expect(fromAcceptLanguage(undefined)).toBeNull();
    expect(fromAcceptLanguage('*')).toBeNull();
    expect(fromAcceptLanguage(';;,q=,hi;q=abc')).toBeNull();
  });
});
