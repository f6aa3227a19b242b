// The dashboard's one script: a "Copy" button next to a secret shown once. Without JavaScript the button stays
// hidden and the secret can be selected and copied by hand. Its messages come from the button, in the page's language.
"use strict";
document.querySelectorAll("button[data-copy-target]").forEach(function (button) {
  var input = document.getElementById(button.getAttribute("data-copy-target"));
  var status = button.closest(".secret").querySelector(".copy-status");
  button.hidden = false;
  button.addEventListener("click", function () {
    input.select();
    var done = function () { status.textContent = button.getAttribute("data-copied"); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () {
        status.textContent = button.getAttribute("data-copy-failed");
      });
    } else {
      document.execCommand("copy");
      done();
    }
  });
});
