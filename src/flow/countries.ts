/**
 * Country codes of `language.by_country`: the ISO 3166 alpha-2 codes a caller's number can
 * belong to. The list is libphonenumber-js's (the engine finds the caller's country with it,
 * so a code it does not know never matches a call); the did-you-mean comes from the
 * runtime's CLDR data (Intl): its region aliases (UK -> GB, DD -> DE), its region names, and
 * the likely country of a language (for a language code written as a country, EN -> GB).
 */
import { getCountries } from 'libphonenumber-js';

const COUNTRIES: ReadonlySet<string> = new Set(getCountries());
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

export interface CountryProblem {
  message: string;
  hint: string;
}

const MAPS = "by_country maps the country of the caller's number to a language.";
const WRITE = 'Write the ISO 3166 code of the country in two capitals: FR, BE, GB, US.';

/** A code's English name, or undefined when the runtime does not know it as a region. */
function regionName(code: string): string | undefined {
  try {
    return REGION_NAMES.of(code);
  } catch {
    return undefined;
  }
}

/** The region CLDR replaces a deprecated or reserved code with (UK -> GB), when it is a country of the list. */
function alias(code: string): string | undefined {
  try {
    const region = new Intl.Locale(Intl.getCanonicalLocales(`und-${code}`)[0]!).region;
    return region !== undefined && region !== code && COUNTRIES.has(region) ? region : undefined;
  } catch {
    return undefined;
  }
}

/** The country of the language tag `tag` when its language is `lang` (EN with en-GB, CS with cs-CZ -> CZ). */
function countryOfTag(lang: string, tag: string | undefined): string | undefined {
  if (tag === undefined) return undefined;
  try {
    const l = new Intl.Locale(tag);
    return l.language === lang && l.region !== undefined && COUNTRIES.has(l.region) ? l.region : undefined;
  } catch {
    return undefined;
  }
}

/** The country where the language is most spoken (en -> US), from CLDR's likely subtags. */
function likelyCountry(lang: string): string | undefined {
  try {
    const r = new Intl.Locale(lang).maximize().region;
    return r !== undefined && COUNTRIES.has(r) ? r : undefined;
  } catch {
    return undefined;
  }
}

const named = (code: string): string => {
  const n = regionName(code);
  return n === undefined ? `'${code}'` : `'${code}' (${n})`;
};

function languageName(lang: string): string | undefined {
  try {
    const n = LANGUAGE_NAMES.of(lang);
    return n === lang ? undefined : n;
  } catch {
    return undefined;
  }
}

/**
 * Why `code` (a key of by_country, mapped to the language tag `tag`) is not a country a
 * caller's number can be from, with a did-you-mean; undefined when it is one.
 */
export function countryProblem(code: string, tag?: string): CountryProblem | undefined {
  if (COUNTRIES.has(code)) return undefined;
  const message = `'${code}' is not an ISO 3166 country code`;
  if (!/^[A-Z]{2}$/.test(code)) {
    const up = code.toUpperCase();
    if (COUNTRIES.has(up)) return { message, hint: `did you mean ${named(up)}? ${WRITE}` };
    return { message, hint: WRITE };
  }
  const lang = code.toLowerCase();
  // a language written as a country, mapped to a tag of that language: the tag's country (EN: en-GB -> GB)
  const ofTag = countryOfTag(lang, tag);
  const language = languageName(lang);
  if (ofTag !== undefined)
    return {
      message,
      hint: `'${lang}' is a language (${language ?? lang}), not a country: did you mean ${named(ofTag)}? ${MAPS}`,
    };
  const to = alias(code);
  if (to !== undefined) return { message, hint: `did you mean ${named(to)}? ${WRITE}` };
  const name = regionName(code);
  if (name !== undefined)
    return {
      message: `${named(code)} is not the country of any telephone number`,
      hint: `${MAPS} ${WRITE}`,
    };
  if (language !== undefined) {
    const c = likelyCountry(lang);
    return {
      message,
      hint:
        `'${lang}' is a language (${language}), not a country` +
        (c === undefined ? '. ' : `: did you mean ${named(c)}? `) +
        MAPS,
    };
  }
  return { message, hint: WRITE };
}
