(function () {
	'use strict';
	// One tab per mode: each mode's own report lives in an iframe of its own, shown by its tab.
	var tabs = document.querySelectorAll('.tabs button');
	var parts = document.querySelectorAll('iframe.part');
	function show(i) {
		for (var k = 0; k < tabs.length; k++) {
			tabs[k].classList.toggle('on', k === i);
			parts[k].classList.toggle('on', k === i);
			tabs[k].setAttribute('aria-selected', k === i ? 'true' : 'false');
		}
	}
	for (var i = 0; i < tabs.length; i++)
		tabs[i].addEventListener('click', show.bind(null, i));
	// a finding's mode opens its tab
	var links = document.querySelectorAll('a[data-part]');
	for (var j = 0; j < links.length; j++) {
		links[j].addEventListener('click', function (e) {
			e.preventDefault();
			show(parseInt(this.getAttribute('data-part'), 10));
			document.querySelector('.tabs').scrollIntoView();
		});
	}
	if (tabs.length)
		show(0);
}());
