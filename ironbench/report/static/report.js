(function(){
var doc=document,each=function(list,f){Array.prototype.forEach.call(list,f);};
doc.documentElement.className+=' js';
function key(td){var v=td.getAttribute('data-v');return v!==null?v:td.textContent.trim();}
each(doc.querySelectorAll('table.sortable'),function(table){
  var heads=table.tHead.rows[0].cells;
  each(heads,function(th,i){
    th.tabIndex=0;
    function sort(){
      var numeric=th.hasAttribute('data-numeric'),asc=th.getAttribute('aria-sort')!=='ascending';
      each(heads,function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=key(a.cells[i]),y=key(b.cells[i]);
        var r=numeric?(parseFloat(x)||0)-(parseFloat(y)||0):x.localeCompare(y,undefined,{numeric:true});
        return asc?r:-r;});
      each(rows,function(r){body.appendChild(r);});
    }
    th.addEventListener('click',sort);
    th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort();}});
  });
});
each(doc.querySelectorAll('table.filterable'),function(table){
  var input=doc.createElement('input'),holder=table.parentNode;
  input.type='search';input.className='filter';input.placeholder='Filter rows';
  input.setAttribute('aria-label','Filter rows');
  holder.parentNode.insertBefore(input,holder);
  input.addEventListener('input',function(){
    var q=input.value.toLowerCase();
    each(table.tBodies[0].rows,function(r){r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});
  });
});
each(doc.querySelectorAll('.group'),function(group){
  var all=group.querySelectorAll(':scope>details');
  if(all.length<2)return;
  var bar=doc.createElement('p');bar.className='toggles';
  [['Expand all',true],['Collapse all',false]].forEach(function(p){
    var b=doc.createElement('button');b.type='button';b.textContent=p[0];
    b.addEventListener('click',function(){each(all,function(d){d.open=p[1];});});
    bar.appendChild(b);bar.appendChild(doc.createTextNode(' '));
  });
  var title=group.querySelector('h3');group.insertBefore(bar,title?title.nextSibling:group.firstChild);
});
})();
