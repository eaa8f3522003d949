// Shows upload progress. The archive is sent with XMLHttpRequest so the
// bar can follow the bytes; on success the browser goes to the new
// skill's page (where the server's redirect led). A refusal is shown by
// sending the form once more the ordinary way, so the error page is a
// real navigation: refusals (role, CSRF, an invalid or conflicting
// archive) store nothing, so the second send only repeats the answer.
// Without this script the form posts normally.
(function () {
  "use strict";
  var form = document.getElementById("upload");
  var bar = document.getElementById("upload-progress");
  if (!form || !bar || !window.XMLHttpRequest || !window.FormData) return;
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    bar.hidden = false;
    bar.value = 0;
    xhr.upload.onprogress = function (p) {
      if (p.lengthComputable) bar.value = Math.round((p.loaded / p.total) * 100);
    };
    xhr.onload = function () {
      if (xhr.status < 400 && xhr.responseURL) {
        location.assign(xhr.responseURL);
      } else {
        form.submit();
      }
    };
    xhr.onerror = function () { form.submit(); };
    xhr.send(new FormData(form));
  });
})();
