eval(atob('YWxlcnQoMSk='));
