/**
 * Realistic chat text for the search benchmark, the same on every run: a
 * seeded generator with a Zipf-like vocabulary (word of rank r drawn with
 * probability ∝ 1/r): about 250 common English chat words at the top, then
 * made-up words from syllables for the long tail (names, jargon, typos), so
 * a few words are everywhere and most are rare, as in a real history.
 * Messages are 1-40 words, some capitalized, with punctuation, now and then
 * an emoji, a number or a link. Every row gets the same columns as
 * seed-data.ts writes.
 */
import { uuidv7At, type SeedRow } from './seed-data.ts';

const COMMON =
  'the i you to a and it is that of in we for on this be have not can just with so but do ' +
  'what at my are was if me know will get all no about think like one there up out your they ' +
  'ok yes yeah good now how time when would from or he going go see need some did more then ' +
  'make also want here lol back thanks work today right let got well really them people could ' +
  'an new us because still any other which been why way should where after something thing ' +
  'sure much tomorrow only day morning week meeting call later please maybe look fix build ' +
  'deploy review test release branch merge issue bug code team lunch coffee done great nice ' +
  'sorry problem check update change data server client error log question answer idea plan ' +
  'next last first before around again into over same long little big small old last wait ' +
  'send file link doc page chat message room channel thread post read write start stop try ' +
  'keep run open close find show tell ask help use give take say feel seems looks works ' +
  'night friday monday weekend home office remote meet talk sync notes slides demo ship';

const SYLLABLES =
  'ka ri to mu ne sa lo vi da pe zu ko ra mi te no ba gu fi le sho tra ven dor kel pax ' +
  'quin brio zel mar tis nov ex ul ar on ix eb fyr gan hul jor lyn mok pry rux sev tam';

const EMOJI = ['🙂', '😂', '👍', '🎉', '🚀', '🔥', '👀', '✅', '🤔', '🙏'];

/** mulberry32: a small seeded PRNG (the same sequence on every machine). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The vocabulary in rank order: the common words, then made-up words. */
function vocabulary(size: number, next: () => number): string[] {
  const words = [...new Set(COMMON.split(' '))];
  const syllables = SYLLABLES.split(' ');
  const seen = new Set(words);
  while (words.length < size) {
    const parts = 2 + Math.floor(next() * 3);
    let word = '';
    for (let i = 0; i < parts; i++) word += syllables[Math.floor(next() * syllables.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  return words;
}

export interface ChatCorpus {
  readonly rows: Generator<SeedRow>;
  /** After the rows are consumed: in how many messages each word occurs (lowercase). */
  readonly documentFrequency: Map<string, number>;
}

const VOCABULARY = 50_000;

/** `count` chat messages, oldest first, ending about now; seeded, so every run makes the same text. */
export function chatCorpus(count: number, seed = 42): ChatCorpus {
  const next = random(seed);
  const words = vocabulary(VOCABULARY, next);
  // Zipf with s = 1: the cumulative weights of the ranks, searched by bisection.
  const cumulative = new Float64Array(words.length);
  let total = 0;
  for (let r = 0; r < words.length; r++) cumulative[r] = total += 1 / (r + 1);
  const pick = () => {
    const x = next() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
  const documentFrequency = new Map<string, number>();
  function* rows(): Generator<SeedRow> {
    const start = Date.now() - count - 60_000;
    for (let i = 0; i < count; i++) {
      const ms = start + i;
      // Mostly short, sometimes long: 1-40 words.
      const length = Math.min(40, 1 + Math.floor(-Math.log(1 - next()) * 8));
      const parts: string[] = [];
      const distinct = new Set<string>();
      for (let w = 0; w < length; w++) {
        const word = pick();
        distinct.add(word);
        parts.push(w === 0 && next() < 0.4 ? word[0]!.toUpperCase() + word.slice(1) : word);
      }
      const roll = next();
      if (roll < 0.05) parts.push(EMOJI[Math.floor(next() * EMOJI.length)]!);
      else if (roll < 0.08) parts.push(String(Math.floor(next() * 10_000)));
      else if (roll < 0.09) parts.push(`https://example.com/${pick()}`);
      const end = next();
      const content = parts.join(' ') + (end < 0.1 ? '?' : end < 0.2 ? '!' : end < 0.3 ? '.' : '');
      for (const word of distinct) {
        documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
      }
      const room = next() < 0.5 ? 'general' : `room-${Math.floor(next() * 10)}`;
      yield {
        id: uuidv7At(ms),
        room,
        author: `user-${Math.floor(next() * 100)}`,
        content,
        createdAt: new Date(ms).toISOString(),
      };
    }
  }
  return { rows: rows(), documentFrequency };
}

/**
 * A word of at least `minLength` letters that occurs in about `target`
 * messages (the closest one): what the search scenarios look for.
 */
export function wordNear(
  frequency: Map<string, number>,
  target: number,
  minLength: number,
): [string, number] {
  let best: [string, number] = ['', 0];
  for (const [word, n] of frequency) {
    if (word.length < minLength) continue;
    if (best[0] === '' || Math.abs(n - target) < Math.abs(best[1] - target)) best = [word, n];
  }
  return best;
}
