import { queryTerms, RELATED_WEIGHT, relatedWords } from '../../src/model/query-words.js';
import { stem, tokenize } from '../../src/model/tokenize.js';

describe('query words', () => {
  it('brings the words tool authors use, below the asker own words', () => {
    const terms = queryTerms('please remember that Alice likes tea');
    expect(terms.get('remember')).toBe(1.5); // the leading verb
    for (const word of ['memory', 'knowledg', 'observat', 'entity']) expect(terms.get(word)).toBe(RELATED_WEIGHT * 1.5);
    expect(terms.get('tea')).toBe(1);
    // One way only: a tool about memory is not about remembering.
    expect(relatedWords('memory')).not.toContain('remember');
    expect(relatedWords(stem('forget'))).toEqual(expect.arrayContaining(['delet', 'remov']));
  });

  it('reads numbers and "+" as a sum, and "when" as a question about time', () => {
    expect([...queryTerms('add 2 and 40').keys()]).toEqual(expect.arrayContaining(['add', 'sum', 'number']));
    const sum = queryTerms('what is 12+30');
    expect([...sum.keys()]).toEqual(expect.arrayContaining(['12', '30', 'plus', 'number', 'sum']));
    const when = queryTerms('when was this file created');
    expect(when.get('time')).toBe(RELATED_WEIGHT);
    expect(when.get('date')).toBe(RELATED_WEIGHT);
  });

  it('joins phrasal verbs and reads a question as recalling, not storing', () => {
    expect(queryTerms('look up Carol').has('lookup')).toBe(true);
    expect(queryTerms('keep in mind that I prefer tea').has('memory')).toBe(true);
    expect(queryTerms('turn off logging').has('disabl')).toBe(true);
    const asked = queryTerms('what do you remember about my projects');
    expect(asked.has('recall')).toBe(true);
    expect(asked.has('search')).toBe(true);
    expect(asked.has('remember')).toBe(false);
  });

  it('does not expand names: New York is a place, notes.txt is a file, not a note', () => {
    const place = queryTerms('the weather in New York');
    expect(place.has('new')).toBe(true);
    expect(place.has('creat')).toBe(false);
    const file = queryTerms('show me notes.txt');
    expect(file.has('observat')).toBe(false);
    expect(file.get('text')).toBe(RELATED_WEIGHT); // the extension says what it holds
    expect(queryTerms('read a.txt and b.md').get('multipl')).toBe(1);
  });

  it('bounds the work on a hostile query', () => {
    const started = performance.now();
    const terms = queryTerms(`${'remember '.repeat(100_000)}x`);
    expect(terms.size).toBeLessThan(20);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('stemming', () => {
  it('joins plural, -ing, -ed, -ion and -ship forms, keeping a vowel', () => {
    expect(['sibling', 'siblings'].map(stem)).toEqual(['sibl', 'sibl']);
    expect(['relation', 'relations', 'relationship', 'relationships', 'relate', 'related'].map(stem)).toEqual(Array(6).fill('relat'));
    expect(['creation', 'create', 'created'].map(stem)).toEqual(['creat', 'creat', 'creat']);
    expect(['string', 'strings'].map(stem)).toEqual(['string', 'string']);
    expect(tokenize("what's in it")).toEqual([]);
  });
});
