/** A JSON value (what a fenced write carries as its payload). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
