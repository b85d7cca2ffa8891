'use strict';
// cases_pl.js — the PL cases (seed 004 §9); none ported yet.
module.exports.cases = {};
