'use strict';
// cases_jq.js — the JQ cases (seed 001 §10); none ported yet.
module.exports.cases = {};
