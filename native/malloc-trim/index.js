'use strict';
// trim(): glibc's malloc_trim(0): true when memory went back to the system (see trim.c).
module.exports = require('./build/Release/malloc_trim.node');
